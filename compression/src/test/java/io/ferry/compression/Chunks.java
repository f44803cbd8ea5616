package io.ferry.compression;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** Chunks of the kinds a checkpoint image holds, seeded, for the codec choices' tests; and a checked encode. */
final class Chunks {
    static final int SIZE = 80 << 10;

    private Chunks() {}

    /**
     * A smooth field of doubles with noisy low mantissa bits, as a simulation's state (and SyntheticImage's fields).
     */
    static byte[] field(int seed) {
        Random r = new Random(seed);
        ByteBuffer b = ByteBuffer.allocate(SIZE).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; b.hasRemaining(); i++) {
            double x = (seed * 10_000 + i) * 1e-4;
            b.putDouble(Math.sin(x) * Math.cos(0.37 * x) + 1e-9 * r.nextDouble());
        }
        return b.array();
    }

    /** Text-like bytes that plain zstd shrinks well and planes badly. */
    static byte[] text(int seed) {
        Random r = new Random(seed);
        String[] words = {"checkpoint ", "rank ", "generation ", "snapshot ", "stage ", "the ", "of ", "node "};
        StringBuilder s = new StringBuilder();
        while (s.length() < SIZE) {
            s.append(words[r.nextInt(words.length)]).append(r.nextInt(100_000)).append('\n');
        }
        return Arrays.copyOf(s.toString().getBytes(StandardCharsets.US_ASCII), SIZE);
    }

    /** Heap-like pages: small integers, pointer-like words, some noise, and every third page untouched (zeros). */
    static byte[] heap(int seed) {
        Random r = new Random(seed);
        ByteBuffer b = ByteBuffer.allocate(SIZE).order(ByteOrder.LITTLE_ENDIAN);
        for (int page = 0; b.hasRemaining(); page++) {
            long base = 0x00007f0000000000L + ((long) r.nextInt(1 << 20) << 12);
            boolean untouched = page % 3 == 0;
            for (int i = 0; i < 512 && b.hasRemaining(); i++) {
                int kind = r.nextInt(10);
                b.putLong(untouched ? 0 : kind < 5 ? r.nextInt(1000) : kind < 8 ? base + (r.nextInt(4096) & ~7)
                        : r.nextLong());
            }
        }
        return b.array();
    }

    static byte[] random(int seed) {
        byte[] b = new byte[SIZE];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** A chunk as encoded: its codec and object length. */
    record Encoded(int codec, int length) {}

    /**
     * Encodes {@code raw} with {@code f}, checks that it decodes back to exactly {@code raw}, and
     * says how it was stored.
     */
    static Encoded encode(ChunkFormat f, byte[] raw) throws CorruptChunkException {
        byte[] out = new byte[f.maxObjectLength(raw.length)];
        int n = f.encode(raw, raw.length, out);
        byte[] back = new byte[raw.length];
        assertEquals(raw.length, ChunkFormat.decode(out, n, Digests.sha256(raw, 0, raw.length), back, "c"));
        assertArrayEquals(raw, back);
        return new Encoded(ChunkFormat.header(out, n, "c").codec(), n);
    }
}
