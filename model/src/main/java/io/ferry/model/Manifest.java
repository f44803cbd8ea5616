package io.ferry.model;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The record of one image: which rank of which generation, the chunk size used, and its
 * entries. Validated on construction: a manifest whose chunk lists do not fit its file sizes,
 * or that names a path twice, or nests a path under a file or symlink, cannot exist.
 *
 * <p>In the pack layout (manifest version 3, {@code docs/formats/pack.md}) {@code packs} names
 * the pack objects its files' blobs lie in, {@code chunkSize} is the largest blob, and every
 * non-empty file lists a place per blob. In the chunk layout {@code packs} is empty.
 *
 * <p>{@code keyId} is empty for an image stored in the clear; for one whose blobs are encrypted
 * (manifest version 4) it is the 16 hex digits of the key's id, and the image is in packs.
 */
public record Manifest(ImageRef image, int chunkSize, List<Entry> entries, List<String> packs, String keyId) {
    public static final int MIN_CHUNK_SIZE = 4096;
    public static final int MAX_CHUNK_SIZE = 64 << 20;

    public Manifest {
        if (image == null) {
            throw new IllegalArgumentException("manifest without image reference");
        }
        if (chunkSize < MIN_CHUNK_SIZE || chunkSize > MAX_CHUNK_SIZE || chunkSize % 4096 != 0) {
            throw new IllegalArgumentException("chunk size must be a multiple of 4096 within "
                    + MIN_CHUNK_SIZE + ".." + MAX_CHUNK_SIZE + ", got " + chunkSize);
        }
        entries = List.copyOf(entries);
        packs = List.copyOf(packs);
        for (String p : packs) {
            if (!Names.isSha256Hex(p)) {
                throw new IllegalArgumentException("manifest " + image
                        + ": pack name must be 64 lower-case hex digits, got "
                        + Names.quote(p));
            }
        }
        boolean inPacks = !packs.isEmpty()
                || entries.stream().anyMatch(e -> e instanceof Entry.RegularFile f && f.inPacks());
        if (keyId == null || !keyId.isEmpty() && !keyId.matches("[0-9a-f]{16}")) {
            throw new IllegalArgumentException("manifest " + image
                    + ": key id must be empty or 16 lower-case hex digits, got "
                    + Names.quote(String.valueOf(keyId)));
        }
        if (!keyId.isEmpty() && !inPacks
                && entries.stream().anyMatch(e -> e instanceof Entry.RegularFile f && f.size() > 0)) {
            throw new IllegalArgumentException("manifest " + image + ": an encrypted image must be in packs");
        }
        Set<String> paths = new HashSet<>();
        Set<String> leaves = new HashSet<>();
        for (Entry e : entries) {
            if (!paths.add(e.path())) {
                throw new IllegalArgumentException("manifest " + image + ": path " + e.path() + " appears twice");
            }
            if (e instanceof Entry.RegularFile f && inPacks) {
                requirePlaces(image, chunkSize, packs.size(), f);
            } else if (e instanceof Entry.RegularFile f) {
                long expected = chunkCount(f.size(), chunkSize);
                if (f.chunks().size() != expected) {
                    throw new IllegalArgumentException("manifest " + image + ": file " + f.path() + " of "
                            + f.size() + " bytes needs " + expected + " chunks, lists " + f.chunks().size());
                }
            }
            if (!(e instanceof Entry.Directory)) {
                leaves.add(e.path());
            }
        }
        for (String p : paths) {
            for (int i = p.indexOf('/'); i >= 0; i = p.indexOf('/', i + 1)) {
                if (leaves.contains(p.substring(0, i))) {
                    throw new IllegalArgumentException("manifest " + image + ": path " + p
                            + " lies under a file or symlink " + p.substring(0, i));
                }
            }
        }
    }

    /** A manifest of the chunk layout (no packs). */
    public Manifest(ImageRef image, int chunkSize, List<Entry> entries) {
        this(image, chunkSize, entries, List.of());
    }

    /** A manifest of an image stored in the clear. */
    public Manifest(ImageRef image, int chunkSize, List<Entry> entries, List<String> packs) {
        this(image, chunkSize, entries, packs, "");
    }

    /** Whether the image's blobs are encrypted (a key id is recorded). */
    public boolean encrypted() {
        return !keyId.isEmpty();
    }

    /** Whether the image's blobs lie in packs (manifest version 3). */
    public boolean inPacks() {
        return !packs.isEmpty() || entries.stream().anyMatch(e -> e instanceof Entry.RegularFile f && f.inPacks());
    }

    private static void requirePlaces(ImageRef image, int chunkSize, int packCount, Entry.RegularFile f) {
        if (f.size() > 0 && !f.inPacks()) {
            throw new IllegalArgumentException("manifest " + image + ": file " + f.path()
                    + " has no blob places in a pack-layout image");
        }
        for (int i = 0; i < f.places().size(); i++) {
            BlobPlace p = f.places().get(i);
            if (p.length() > chunkSize) {
                throw new IllegalArgumentException("manifest " + image + ": file " + f.path() + " blob " + i + " of "
                        + p.length() + " bytes exceeds the largest blob size " + chunkSize);
            }
            if (p.pack() >= packCount) {
                throw new IllegalArgumentException("manifest " + image + ": file " + f.path() + " blob " + i
                        + " names pack " + p.pack() + " of " + packCount);
            }
        }
    }

    /** Number of chunks of a file of {@code size} bytes. */
    public static long chunkCount(long size, int chunkSize) {
        return (size + chunkSize - 1) / chunkSize;
    }

    /** Sum of the sizes of the regular files. */
    public long rawBytes() {
        long n = 0;
        for (Entry e : entries) {
            if (e instanceof Entry.RegularFile f) {
                n += f.size();
            }
        }
        return n;
    }
}
