package io.ferry.staging.chunking;

import java.util.SplittableRandom;

/**
 * Content-defined chunking, FastCDC (Xia et al., USENIX ATC 2016): a boundary falls where a
 * rolling "gear" hash of the last 64 bytes has its top bits clear, so boundaries move with the
 * content: bytes inserted near the start of a file shift every fixed-size chunk after them,
 * but only the content-defined chunks around the insertion. Normalised chunking (a stricter
 * mask before the average size, a looser one after) keeps most chunks near the average;
 * {@code min} and {@code max} bound them.
 *
 * <p>The gear table is fixed (seeded): the same bytes give the same boundaries on every node,
 * which is what deduplication across nodes and generations needs. Stateless and thread-safe.
 * Storage engine v2 (issue 14), step 2: measured beside fixed-size chunks by
 * {@code benchmarks/run-chunking.sh}; not yet the push's chunker.
 */
public final class FastCdc {
    private static final long[] GEAR = new long[256];

    static {
        SplittableRandom r = new SplittableRandom(0x5EED_FE77_C0DEL);
        for (int i = 0; i < 256; i++) {
            GEAR[i] = r.nextLong();
        }
    }

    private final int min;
    private final int avg;
    private final int max;
    private final long maskStrict;
    private final long maskLoose;

    /**
     * @param avg the average chunk size wanted, a power of two from 256 B; chunks are at least
     *            {@code avg / 4} and at most {@code avg * 4} bytes (the last one of a buffer may be shorter)
     */
    public FastCdc(int avg) {
        if (avg < 256 || Integer.bitCount(avg) != 1 || avg > (1 << 26)) {
            throw new IllegalArgumentException("average chunk size must be a power of two from 256 B to 64 MiB, got " + avg);
        }
        int bits = Integer.numberOfTrailingZeros(avg);
        this.avg = avg;
        this.min = avg / 4;
        this.max = avg * 4;
        // The top bits of a left-shifting gear hash depend on the last 64 bytes; the low ones on the last few only.
        this.maskStrict = topBits(bits + 2);
        this.maskLoose = topBits(bits - 2);
    }

    private static long topBits(int n) {
        return n <= 0 ? 0 : -1L << (64 - n);
    }

    public int min() {
        return min;
    }

    public int avg() {
        return avg;
    }

    public int max() {
        return max;
    }

    /** The length of the chunk that starts at {@code b[from]}, within {@code b[from, to)}. */
    public int next(byte[] b, int from, int to) {
        int n = to - from;
        if (n <= min) {
            return n;
        }
        int end = from + Math.min(n, max);
        int normal = from + Math.min(n, avg);
        long fp = 0;
        int i = from + min;
        for (; i < normal; i++) {
            fp = (fp << 1) + GEAR[b[i] & 0xff];
            if ((fp & maskStrict) == 0) {
                return i + 1 - from;
            }
        }
        for (; i < end; i++) {
            fp = (fp << 1) + GEAR[b[i] & 0xff];
            if ((fp & maskLoose) == 0) {
                return i + 1 - from;
            }
        }
        return end - from;
    }
}
