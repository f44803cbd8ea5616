package io.ferry.compression;

import org.junit.jupiter.api.Test;

import java.util.Random;

import static io.ferry.compression.Chunks.SIZE;
import static io.ferry.compression.Chunks.encode;
import static io.ferry.compression.Chunks.field;
import static io.ferry.compression.Chunks.heap;
import static io.ferry.compression.Chunks.random;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class Lz4ChoiceTest {
    private final ChunkFormat all = new ChunkFormat(Codecs.zstd(1), Codecs.zstdPlanes(1), Codecs.lz4(), 1.02);
    private final ChunkFormat zstdOnly = new ChunkFormat(Codecs.zstd(1), Codecs.zstdPlanes(1), 1.02);

    @Test
    void heapPagesGoToLz4AfterZstdsFirstChunkAndAreStoredAtHalfOrLess() throws Exception {
        assertEquals(Codecs.ZSTD_ID, encode(all, heap(0)).codec(),
                "the thread's first chunk: zstd, whose ratio hints at LZ4");
        long lz4 = 0;
        long zstd = 0;
        for (int i = 1; i < 40; i++) {
            byte[] h = heap(i);
            Chunks.Encoded e = encode(all, h);
            assertEquals(Codecs.LZ4_ID, e.codec(), "heap chunk " + i);
            assertTrue(e.length() <= SIZE / 2 + ChunkHeader.LENGTH,
                    "kept only where it halves the chunk: " + e.length());
            lz4 += e.length();
            zstd += encode(zstdOnly, h).length();
        }
        // The price, bounded: zstd's entropy coding would store such pages smaller.
        assertTrue(lz4 > zstd && lz4 < 1.6 * zstd, lz4 + " bytes with LZ4 against " + zstd + " with zstd");
    }

    @Test
    void fieldsStayOverPlanesAndNoiseRawAndAThreadGoesBackToLz4WhenHeapReturns() throws Exception {
        encode(all, heap(0));
        assertEquals(Codecs.LZ4_ID, encode(all, heap(1)).codec());
        // Fields after heap: LZ4 does not halve the first, which then goes to zstd, and the thread with it.
        for (int i = 0; i < 20; i++) {
            assertEquals(Codecs.PLANES_ID, encode(all, field(i)).codec(), "field " + i);
        }
        for (int i = 0; i < 5; i++) {
            assertEquals(Codecs.RAW_ID, encode(all, random(i)).codec(), "random " + i);
        }
        assertEquals(Codecs.ZSTD_ID, encode(all, heap(2)).codec(), "the first heap chunk after other data");
        assertEquals(Codecs.LZ4_ID, encode(all, heap(3)).codec(), "and the next at once");
    }

    /** Letters of an eight-letter alphabet: zstd's entropy coding shrinks them below 40%, LZ4 finds little to match. */
    private static byte[] letters(int seed) {
        Random r = new Random(seed);
        byte[] b = new byte[SIZE];
        for (int i = 0; i < SIZE; i++) {
            b[i] = (byte) ('a' + r.nextInt(8));
        }
        return b;
    }

    @Test
    void aHintThatMisledIsIgnoredSixteenTimes() throws Exception {
        byte[] l = letters(0);
        Chunks.Encoded z = encode(all, l);
        assertEquals(Codecs.ZSTD_ID, z.codec());
        assertTrue(z.length() * Lz4Choice.TRY_FROM <= SIZE,
                "zstd shrinks such letters enough to hint at LZ4: " + z.length());
        assertEquals(Codecs.ZSTD_ID, encode(all, letters(1)).codec(),
                "LZ4 does not halve them: zstd again, the hint misled");
        for (int i = 0; i < Lz4Choice.BACK_OFF + 1; i++) { // the next sixteen hints ignored, the seventeenth taken
            assertEquals(Codecs.ZSTD_ID, encode(all, heap(i)).codec(), "heap chunk " + i);
        }
        assertEquals(Codecs.LZ4_ID, encode(all, heap(99)).codec());
    }

    @Test
    void heapPagesRightAfterFieldsAreSeenByTheLz4SampleAndLeavePlanes() throws Exception {
        for (int i = 0; i < 5; i++) {
            assertEquals(Codecs.PLANES_ID, encode(all, field(i)).codec(), "field " + i);
        }
        // The sample of a heap chunk that LZ4 shrinks (the probe while planes win) has it compressed plain too: plain
        // wins, then zstd's ratio sends the next chunk to LZ4.
        Chunks.Encoded first = encode(all, heap(5));
        assertEquals(Codecs.ZSTD_ID, first.codec());
        assertTrue(first.length() <= encode(zstdOnly, heap(5)).length(), "no larger than plain zstd alone");
        assertEquals(Codecs.LZ4_ID, encode(all, heap(6)).codec());
    }

    @Test
    void withoutLz4EveryChunkGoesToZstd() throws Exception {
        for (int i = 0; i < 5; i++) {
            assertEquals(Codecs.ZSTD_ID, encode(zstdOnly, heap(i)).codec());
        }
    }
}
