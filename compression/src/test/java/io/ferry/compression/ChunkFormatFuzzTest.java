package io.ferry.compression;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Seeded mutation fuzzing of chunk objects as a store could hand them back (bit rot, torn or
 * padded writes, a header from another chunk): every mutant is either refused with a
 * {@link CorruptChunkException} or, when the mutation left the object valid, decodes to exactly
 * the bytes its name promises. Never another exception, never other bytes. Zstd, raw and LZ4
 * objects, 3,000 mutants each.
 */
class ChunkFormatFuzzTest {
    private static final int SIZE = 64 * 1024;

    @Test
    void mutatedChunkObjectsAreRefusedAsCorruptOrGiveBackExactlyTheirBytes() throws Exception {
        long seed = 20261123L;
        Random rnd = new Random(seed);
        byte[] raw = new byte[SIZE];
        for (int i = 0; i < SIZE; i++) {
            raw[i] = (byte) (i % 251 < 200 ? i / 97 : rnd.nextInt()); // compressible, with noise
        }
        byte[] sha = Digests.sha256(raw, 0, SIZE);
        for (int codec : new int[]{Codecs.ZSTD_ID, Codecs.RAW_ID, Codecs.LZ4_ID}) {
            // raw: compression "never pays"; LZ4: the second chunk of a thread, after zstd's first hints at it
            ChunkFormat format = codec == Codecs.LZ4_ID ? new ChunkFormat(Codecs.zstd(1), null, Codecs.lz4(), 1.02)
                    : new ChunkFormat(Codecs.zstd(1), codec == Codecs.RAW_ID ? 1000 : 1.02);
            byte[] out = new byte[format.maxObjectLength(SIZE)];
            byte[] obj = Arrays.copyOf(out, format.encode(raw, SIZE, out));
            if (codec == Codecs.LZ4_ID) {
                obj = Arrays.copyOf(out, format.encode(raw, SIZE, out));
            }
            assertEquals(codec, ChunkFormat.header(obj, obj.length, "fuzz").codec());
            int corrupt = 0;
            for (int i = 0; i < 3000; i++) {
                byte[] m = mutate(obj, rnd);
                byte[] back = new byte[SIZE];
                try {
                    int n = ChunkFormat.decode(m, m.length, sha, back, "fuzz");
                    assertEquals(SIZE, n);
                    assertArrayEquals(raw, back, "a mutant that decodes gives back exactly the named bytes");
                } catch (CorruptChunkException e) {
                    corrupt++;
                } catch (RuntimeException e) {
                    fail("mutant " + i + " (seed " + seed + ", codec " + codec + ") raised " + e, e);
                }
            }
            assertTrue(corrupt > 2900, corrupt + " of 3000 refused");
        }
    }

    private static byte[] mutate(byte[] in, Random rnd) {
        byte[] b = in.clone();
        switch (rnd.nextInt(4)) {
            case 0 -> { // bit rot, in the header or the body
                int at = rnd.nextInt(rnd.nextBoolean() ? Math.min(20, b.length) : b.length);
                b[at] ^= (byte) (1 << rnd.nextInt(8));
            }
            case 1 -> b = Arrays.copyOf(b, rnd.nextInt(b.length)); // torn write
            case 2 -> b = Arrays.copyOf(b, b.length + 1 + rnd.nextInt(4096)); // padded with zeros
            default -> { // a header field set to an extreme value
                int field = 4 + 4 * rnd.nextInt(4); // raw length, stored length, CRC32C, or the codec/flags word
                int v = switch (rnd.nextInt(4)) {
                    case 0 -> 0;
                    case 1 -> -1;
                    case 2 -> Integer.MAX_VALUE;
                    default -> rnd.nextInt();
                };
                if (field + 4 <= b.length) {
                    b[field] = (byte) (v >>> 24);
                    b[field + 1] = (byte) (v >>> 16);
                    b[field + 2] = (byte) (v >>> 8);
                    b[field + 3] = (byte) v;
                }
            }
        }
        return b;
    }
}
