package io.ferry.staging;

import io.ferry.model.Names;
import io.ferry.staging.packs.PackKeys;
import io.ferry.stores.Store;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * The names of the packs on a store, for gc: each 64-hex name kept as its 32 bytes (four
 * {@code long}s in one sorted array), about 32 bytes a pack where a set of strings costs some
 * 180. Listed one pack folder ({@code ferry/v2/packs/<2 hex>/}) at a time, so the listing never
 * holds every key as a string either. Immutable once listed.
 */
final class PackNames {
    private final long[] words;
    private final int size;

    private PackNames(long[] words, int size) {
        this.words = words;
        this.size = size;
    }

    /** The packs on {@code store}, folder by folder. */
    static PackNames list(Store store) throws IOException {
        long[] w = new long[64];
        int n = 0;
        for (int folder = 0; folder < 256; folder++) {
            for (String key : store.list(PackKeys.PACKS + folder(folder))) {
                Optional<String> name = PackKeys.nameOf(key);
                if (name.isEmpty()) {
                    continue;
                }
                if (4 * (n + 1) > w.length) {
                    w = Arrays.copyOf(w, w.length * 2);
                }
                encode(name.get(), w, 4 * n++);
            }
        }
        // Each folder's listing is sorted, and the folders come in order: so is the whole.
        return new PackNames(w, n);
    }

    int size() {
        return size;
    }

    /** Whether a pack of this name is on the store (a name that is not 64 hex digits is not). */
    boolean contains(String name) {
        if (!Names.isSha256Hex(name)) {
            return false;
        }
        long[] key = new long[4];
        encode(name, key, 0);
        int lo = 0;
        int hi = size - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            int c = compare(mid, key);
            if (c < 0) {
                lo = mid + 1;
            } else if (c > 0) {
                hi = mid - 1;
            } else {
                return true;
            }
        }
        return false;
    }

    /** The names whose first byte is in {@code [from, to)} (a pass's range of pack folders). */
    List<String> inFolders(int from, int to) {
        List<String> out = new ArrayList<>();
        for (int i = firstInFolder(from); i < size && (int) (words[4 * i] >>> 56) < to; i++) {
            out.add(name(i));
        }
        return out;
    }

    /** The index of the first name whose folder is {@code folder} or later (the names are sorted). */
    private int firstInFolder(int folder) {
        int lo = 0;
        int hi = size;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if ((int) (words[4 * mid] >>> 56) < folder) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /**
     * The sub-folder of pack folder {@code folder} (0-255) under a packs or fossil packs prefix: {@code "<2 hex>/"}.
     */
    static String folder(int folder) {
        return String.format("%02x/", folder);
    }

    private String name(int i) {
        StringBuilder b = new StringBuilder(64);
        HexFormat hex = HexFormat.of();
        for (int k = 0; k < 4; k++) {
            b.append(hex.toHexDigits(words[4 * i + k]));
        }
        return b.toString();
    }

    private int compare(int i, long[] key) {
        for (int k = 0; k < 4; k++) {
            int c = Long.compareUnsigned(words[4 * i + k], key[k]);
            if (c != 0) {
                return c;
            }
        }
        return 0;
    }

    private static void encode(String name, long[] into, int at) {
        for (int k = 0; k < 4; k++) {
            into[at + k] = Long.parseUnsignedLong(name, 16 * k, 16 * k + 16, 16);
        }
    }

    /** The folder (first byte, 0-255) of a pack name. */
    static int folderOf(String name) {
        return Integer.parseInt(name, 0, 2, 16);
    }
}
