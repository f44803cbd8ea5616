package io.ferry.compression;

/**
 * One thread's choice between a codec and the same codec over planes ({@link Codecs#zstdPlanes}),
 * chunk by chunk, for {@link ChunkFormat}. A worker compresses a file's chunks in runs (a
 * segment of several MiB at a time), and the kind of data changes seldom within a run, so the
 * outcome of one chunk predicts the next:
 *
 * <ul>
 *   <li>While the plain codec is winning, a chunk it shrinks by less than {@link #TRY_BELOW}
 *       (but by at least {@link #TRY_FROM}: below that it is noise, stored raw) is compressed over
 *       planes too, and the smaller result kept. A try that loses makes the next
 *       {@link #EVERY} such chunks go untried.</li>
 *   <li>While planes are winning, each chunk goes over planes, and its first {@link #SAMPLE}
 *       bytes through a probe too: LZ4 where the format has it (on such fields it finds nothing
 *       and skips ahead, at a seventh of zstd's cost), else plain zstd (a tenth of a 64 KiB blob's
 *       work). Every {@link #EVERY}th chunk, any
 *       that planes shrink by {@link #CHECK_FROM} or more (data that compresses well, which plain
 *       zstd usually compresses better), and any whose sample the probe shrinks by
 *       {@link #TRY_BELOW} or more (the data changed kind) is compressed plain as well, and the
 *       winner decides the next chunks. A chunk that planes do not shrink (noise) sends the
 *       thread back to plain, which passes over noise fastest. Back in plain either way, the
 *       next chunk that plain zstd shrinks little tries planes again at once: a worker goes from
 *       one file to the next, and fields often follow other data.</li>
 * </ul>
 *
 * So float fields cost one compression per chunk, over planes, plus a sample, and text and
 * heap pages one, plain, with a second only where the data changes kind. The choice changes only how small a
 * chunk is stored, never what it decodes to. Not thread-safe: one per thread.
 */
final class PlanesChoice {
    static final double TRY_FROM = 1.02;
    static final double TRY_BELOW = 1.3;
    static final double CHECK_FROM = 2.0;
    static final int EVERY = 16;
    /**
     * Bytes at the start of a chunk that plain zstd compresses, while planes win, to see whether the data changed kind.
     */
    static final int SAMPLE = 8 << 10;
    private boolean planes;
    private int since;
    private boolean usedPlanes;
    private byte[] scratch = new byte[0];

    /** Whether the last {@link #compress} call's result is the planes codec's. */
    boolean usedPlanes() {
        return usedPlanes;
    }

    /**
     * Compresses {@code raw[off, off + len)} into {@code out} at {@code at} with {@code plain} or
     * {@code overPlanes}, whichever this thread's data favours; returns the compressed length. {@code probe}
     * compresses the samples that tell whether the data changed kind: LZ4, or {@code plain} itself.
     */
    int compress(Codec plain, Codec overPlanes, Codec probe, byte[] raw, int off, int len, byte[] out,
            int at, int bound) {
        if (planes) {
            int p = overPlanes.compress(raw, off, len, out, at);
            usedPlanes = true;
            double ratio = (double) len / p;
            if (ratio < TRY_FROM) { // noise, stored raw: plain finds that sooner
                planes = false;
                since = 0; // and the next chunk plain zstd shrinks little tries planes at once
                return p;
            }
            int sample = Math.min(len, SAMPLE);
            if (++since < EVERY && ratio < CHECK_FROM
                    && (double) sample / probe.compress(raw, off, sample, scratch(bound), 0) < TRY_BELOW) {
                return p;
            }
            int q = plain.compress(raw, off, len, scratch(bound), 0);
            if (p <= q) {
                since = 0;
                return p;
            }
            planes = false; // the data changed kind: plain again, planes tried again at the next chunk that fits
            since = 0;
            return fromScratch(false, q, out, at);
        }
        int q = plain.compress(raw, off, len, out, at);
        usedPlanes = false;
        double ratio = (double) len / q;
        if (ratio < TRY_FROM || ratio >= TRY_BELOW || since-- > 0) {
            return q;
        }
        int p = overPlanes.compress(raw, off, len, scratch(bound), 0);
        if (p < q) {
            planes = true;
            since = 0;
            return fromScratch(true, p, out, at);
        }
        since = EVERY; // planes lost on data of this kind: not tried again for a while
        return q;
    }

    private int fromScratch(boolean overPlanes, int length, byte[] out, int at) {
        System.arraycopy(scratch, 0, out, at, length);
        usedPlanes = overPlanes;
        return length;
    }

    private byte[] scratch(int bound) {
        if (scratch.length < bound) {
            scratch = new byte[bound];
        }
        return scratch;
    }
}
