package io.ferry.staging.internal;

import io.ferry.compression.ChunkFormat;
import io.ferry.model.ChunkId;
import io.ferry.model.Entry;
import io.ferry.model.ImageRef;
import io.ferry.model.Manifest;
import io.ferry.staging.PushImage;
import io.ferry.staging.Repository;
import io.ferry.staging.chunking.FastCdc;
import io.ferry.staging.packs.BlobLocation;
import io.ferry.stores.ObjectNotFoundException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A sample of images before their push, saying what the push would write
 * ({@link io.ferry.staging.StagingPipeline#estimateWritten}): cut, named and looked up as
 * {@link PackPush} would, in the same {@code base} of stored blobs, and nothing written.
 */
public final class PushSample {
    private final Repository repo;
    private final ChunkFormat format;
    private final FastCdc cdc;
    private final Map<ChunkId, BlobLocation> base;
    private final byte[] zeros;

    /** @param base the blobs a push of the same images would deduplicate against ({@link PackPush#baseFor}) */
    public PushSample(Repository repo, ChunkFormat format, FastCdc cdc, Map<ChunkId, BlobLocation> base) {
        this.repo = repo;
        this.format = format;
        this.cdc = cdc;
        this.base = base;
        this.zeros = new byte[cdc.max()];
    }

    /**
     * What a push of {@code images} would write, estimated from a sample before anything is
     * written: windows of about {@code share} of each image's bytes, spread evenly over its files,
     * are cut into blobs as the push cuts them (a window's first blobs, cut from an arbitrary
     * offset, are left out until the cut points fall where the push's would) and each blob is
     * looked up where the push would look (the rank's earlier manifests, its siblings), and the
     * new ones encoded as they would be stored. Per image: {@code [sampled raw, of which new raw,
     * their stored bytes]}.
     */
    public long[][] sample(List<PushImage> images, List<List<ImageScanner.Found>> scanned, double share)
            throws IOException {
        long[][] out = new long[images.size()][3];
        int window = Math.max(2 * cdc.max(), 256 << 10); // a few blobs past the two a window's start may cut wrong
        byte[] buf = new byte[window];
        byte[] obj = new byte[repo.blobs().maxRecordLength(format, cdc.max())];
        for (int i = 0; i < images.size(); i++) {
            Map<String, long[]> cuts = previousCuts(images.get(i).ref());
            long total = scanned.get(i).stream().filter(f -> f.kind() == ImageScanner.Kind.FILE)
                    .mapToLong(ImageScanner.Found::size).sum();
            long budget = Math.max((long) MIN_WINDOWS * window, (long) Math.ceil(total * share)); // at least a spread
            for (ImageScanner.Found f : scanned.get(i)) {
                if (f.kind() != ImageScanner.Kind.FILE || f.size() == 0 || total == 0) {
                    continue;
                }
                // this file's part of the sample
                long mine = Math.max(1, Math.round((double) budget * f.size() / total));
                int windows = (int) Math.max(1, Math.min(1024, mine / window));
                try (FileChannel ch = FileChannel.open(f.file(),
                        StandardOpenOption.READ)) {
                    for (int w = 0; w < windows; w++) {
                        long at = f.size() <= window ? 0 : (f.size() - window) * w / Math.max(1, windows - 1);
                        int len = (int) Math.min(window, f.size() - at);
                        ByteBuffer bb = ByteBuffer.wrap(buf, 0, len);
                        while (bb.hasRemaining() && ch.read(bb, at + bb.position()) >= 0) {
                            // read the window whole
                        }
                        sampleWindow(buf, bb.position(), at == 0 ? 0
                                : firstCutIn(cuts.get(f.path()), at, bb.position()), obj,
                                out[i]);
                    }
                }
            }
        }
        return out;
    }

    /** Windows a sample reads at least per image (more than its share of a small image): a spread, not one place. */
    static final int MIN_WINDOWS = 16;

    /**
     * Adds a window's blobs to {@code acc} (sampled, new, stored): from the file's start, or else
     * from the first point where cuts made from the window's start and from a little after it
     * agree. Content-defined cuts made from two places meet and then go on together, as the
     * push's own cuts, made from the file's start, do: before that point a window's blobs are not
     * the push's, and would all look new.
     */
    private void sampleWindow(byte[] buf, int len, int start, byte[] obj, long[] acc) throws IOException {
        int at = start >= 0 ? start : synced(buf, len);
        if (at < 0) {
            // No meeting point: cuts at the largest blob size everywhere, as in a run of one byte value. A window
            // of zeros is sampled as such (never written); another is taken from its third cut.
            if (Arrays.mismatch(buf, 0, len, new byte[len], 0, len) == -1) {
                acc[0] += len;
                return;
            }
            at = 0;
            for (int k = 0; k < 2 && at < len; k++) {
                at += cdc.next(buf, at, len);
            }
        }
        long counted = 0;
        long fresh = 0;
        long stored = 0;
        while (at < len) {
            int n = cdc.next(buf, at, len);
            if (at + n == len && len == buf.length) {
                break; // cut by the window's end, not by content
            }
            counted += n;
            if (Arrays.mismatch(buf, at, at + n, zeros, 0, n) != -1) { // zeros are never written
                ChunkId id = repo.blobs().name(buf, at, n);
                BlobLocation known = base.get(id);
                if (known == null || known.length() != n) {
                    fresh += n;
                    stored += repo.blobs().encode(format, id, buf, at, n, obj);
                }
            }
            at += n;
        }
        if (counted > 0) { // each window stands for its whole length, whatever part of it was cut into blobs
            acc[0] += len;
            acc[1] += Math.round((double) len * fresh / counted);
            acc[2] += Math.round((double) len * stored / counted);
        }
    }

    /**
     * Each file's cut points (ends of its blobs) in the rank's newest earlier manifest on the
     * store: where the push's own cuts fall wherever the file is as it was then. Empty when there
     * is none or it cannot be read.
     */
    private Map<String, long[]> previousCuts(ImageRef ref) {
        for (long g = ref.generation() - 1; g >= Math.max(0, ref.generation() - PackPush.LOOKBACK); g--) {
            try {
                Manifest m = repo.readManifest(new ImageRef(ref.job(), g, ref.rank())).manifest();
                Map<String, long[]> out = new HashMap<>();
                for (Entry e : m.entries()) {
                    if (e instanceof Entry.RegularFile f && f.places() != null) {
                        long[] ends = new long[f.places().size()];
                        long end = 0;
                        for (int k = 0; k < ends.length; k++) {
                            end += f.places().get(k).length();
                            ends[k] = end;
                        }
                        out.put(f.path(), ends);
                    }
                }
                return out;
            } catch (ObjectNotFoundException none) {
                // an earlier generation, perhaps
            } catch (IOException | RuntimeException unreadable) {
                return Map.of();
            }
        }
        return Map.of();
    }

    /** The offset in a window at file offset {@code at} of the first earlier cut inside it, or -1 for none. */
    private static int firstCutIn(long[] ends, long at, int len) {
        if (ends == null) {
            return -1;
        }
        int k = Arrays.binarySearch(ends, at);
        k = k >= 0 ? k : -k - 1;
        return k < ends.length && ends[k] - at < len ? (int) (ends[k] - at) : -1;
    }

    /** The first cut that cuts from the window's start and from {@code min / 2} after it share, or -1. */
    private int synced(byte[] buf, int len) {
        Set<Integer> a = new HashSet<>();
        for (int at = 0; at < len; ) {
            at += cdc.next(buf, at, len);
            a.add(at);
        }
        for (int at = Math.max(1, cdc.min() / 2); at < len; ) {
            at += cdc.next(buf, at, len);
            if (a.contains(at) && at < len) {
                return at;
            }
        }
        return -1;
    }

}
