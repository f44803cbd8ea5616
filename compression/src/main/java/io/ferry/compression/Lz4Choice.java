package io.ferry.compression;

/**
 * One thread's choice, chunk by chunk, between LZ4 ({@link Codecs#lz4}) and zstd, for
 * {@link ChunkFormat}. LZ4 is kept for a chunk it shrinks to half or less ({@link #KEEP_FROM}):
 * heap pages and much machine code, which it compresses 1.4 to 1.6 times and decodes three times
 * as fast as zstd level 1 does, for about a quarter more bytes. Everything else goes to zstd, whose entropy
 * coding is most of the gain on data that compresses little (and byte planes, on float fields).
 * The kind of data changes seldom within a worker's run of chunks, so:
 *
 * <ul>
 *   <li>While zstd is in use, a chunk it shrinks by {@link #TRY_FROM} or more (zstd's own result,
 *       no extra work) makes the next chunk go to LZ4.</li>
 *   <li>While LZ4 is in use, each chunk goes to LZ4 first; one it does not halve goes to zstd as
 *       well (its LZ4 pass wasted), and the thread goes back to zstd. If that chunk was the first
 *       LZ4 had after zstd's hint, the hint misled (data zstd compresses well but LZ4 not), and
 *       the next {@link #BACK_OFF} hints are ignored.</li>
 * </ul>
 *
 * The choice changes only how a chunk is stored, never what it decodes to. Not thread-safe: one
 * per thread.
 */
final class Lz4Choice {
    /** LZ4 is kept for a chunk it shrinks at least this much (raw/compressed). */
    static final double KEEP_FROM = 2.0;
    /** zstd's ratio on a chunk from which the next chunk tries LZ4. */
    static final double TRY_FROM = 2.5;
    static final int BACK_OFF = 16;
    private boolean lz4;
    private boolean firstTry;
    private boolean failed;
    private int ignore;

    /**
     * Compresses {@code raw[off, off + len)} with LZ4 into {@code out} at {@code at} if this
     * thread's data favours LZ4 and LZ4 halves the chunk; returns the compressed length, or -1
     * if zstd is to compress it (then {@link #zstdDid} is to be told how that went).
     */
    int tryLz4(Codec lz4Codec, byte[] raw, int off, int len, byte[] out, int at) {
        if (!lz4) {
            return -1;
        }
        int n = lz4Codec.compress(raw, off, len, out, at);
        boolean first = firstTry;
        firstTry = false;
        if ((double) len / n >= KEEP_FROM) {
            return n;
        }
        lz4 = false;
        failed = true; // zstd's result on this chunk hints at nothing
        if (first) {
            ignore = BACK_OFF;
        }
        return -1;
    }

    /** What zstd made of a chunk of {@code len} raw bytes: {@code stored} bytes. */
    void zstdDid(int len, int stored) {
        if (failed) {
            failed = false;
            return;
        }
        if ((double) len / stored < TRY_FROM) {
            return;
        }
        if (ignore > 0) {
            ignore--;
            return;
        }
        lz4 = true;
        firstTry = true;
    }
}
