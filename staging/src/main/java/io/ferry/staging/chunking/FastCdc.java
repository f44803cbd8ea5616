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
 * The pack layout's push cuts with it; {@code benchmarks/run-chunking.sh} measures it beside
 * fixed-size chunks and other minimums.
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
     * The engine's chunker: no cut before {@code avg}, less the gear hash's 64-byte window (its
     * minimum), at most four times {@code avg}; about 1.3 times {@code avg} on average.
     *
     * <p>Why so: the gear hash runs only past the minimum, so the minimum sets what cutting costs,
     * and cuts before the average were rare anyway (the stricter mask there: 2^-18 a byte). With
     * FastCDC's usual quarter, a 64 KiB average hashed about 64 KiB of each 80 KiB blob; with three
     * quarters (the engine's minimum from 2026-11-25), about 32 KiB; from the average less 64 bytes,
     * about 20 KiB, the 64 bytes filling the hash before the looser mask applies. Measured on the
     * seeded 256 MiB image ({@code benchmarks/run-chunking.sh}, 2026-11-27): the cut runs at 5,874
     * against 3,368 MB/s on one core (three quarters; a quarter: 1,750), for 12.9% instead of 12.7%
     * added by a generation with 5% scattered rewrites (a quarter: 11.5%), and 0.2% either way after
     * shifted bytes. Blobs average 84.8 KiB on the 1 GiB seeded image, against 83.5 KiB.
     *
     * @param avg the average chunk size wanted, a power of two from 256 B; chunks are at least
     *            {@code avg - 64} and at most {@code avg * 4} bytes (the last one of a buffer may be shorter)
     */
    public FastCdc(int avg) {
        this(avg, avg - WINDOW);
    }

    /** Bytes a gear hash's value depends on: each step shifts the older bytes' share one bit up and out. */
    static final int WINDOW = 64;

    /**
     * A chunker with its own minimum (benchmarks compare minimums with it).
     *
     * @param min the shortest chunk but a buffer's last, from 64 B up to {@code avg}
     */
    public FastCdc(int avg, int min) {
        if (avg < 256 || Integer.bitCount(avg) != 1 || avg > (1 << 26)) {
            throw new IllegalArgumentException("average chunk size must be a power of two from 256 B to 64 MiB, got "
                    + avg);
        }
        if (min < 64 || min > avg) {
            throw new IllegalArgumentException("minimum chunk size must be from 64 B up to the average " + avg
                    + ", got " + min);
        }
        int bits = Integer.numberOfTrailingZeros(avg);
        this.avg = avg;
        this.min = min;
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
