package io.ferry.compression;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PlanesChoiceTest {
    private static final int SIZE = 80 << 10;
    private final ChunkFormat both = new ChunkFormat(Codecs.zstd(1), Codecs.zstdPlanes(1), 1.02);
    private final ChunkFormat plainOnly = new ChunkFormat(Codecs.zstd(1), 1.02);

    /** A smooth field of doubles with noisy low mantissa bits, as a simulation's state (and SyntheticImage's fields). */
    private static byte[] field(int seed) {
        Random r = new Random(seed);
        ByteBuffer b = ByteBuffer.allocate(SIZE).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; b.hasRemaining(); i++) {
            double x = (seed * 10_000 + i) * 1e-4;
            b.putDouble(Math.sin(x) * Math.cos(0.37 * x) + 1e-9 * r.nextDouble());
        }
        return b.array();
    }

    /** Text-like bytes that plain zstd shrinks well and planes badly. */
    private static byte[] text(int seed) {
        Random r = new Random(seed);
        String[] words = {"checkpoint ", "rank ", "generation ", "snapshot ", "stage ", "the ", "of ", "node "};
        StringBuilder s = new StringBuilder();
        while (s.length() < SIZE) {
            s.append(words[r.nextInt(words.length)]).append(r.nextInt(100_000)).append('\n');
        }
        return Arrays.copyOf(s.toString().getBytes(java.nio.charset.StandardCharsets.US_ASCII), SIZE);
    }

    private static byte[] random(int seed) {
        byte[] b = new byte[SIZE];
        new Random(seed).nextBytes(b);
        return b;
    }

    private record Encoded(int codec, int length) {}

    private static Encoded encode(ChunkFormat f, byte[] raw) throws CorruptChunkException {
        byte[] out = new byte[f.maxObjectLength(raw.length)];
        int n = f.encode(raw, raw.length, out);
        byte[] back = new byte[raw.length];
        assertEquals(raw.length, ChunkFormat.decode(out, n, Digests.sha256(raw, 0, raw.length), back, "c"));
        assertArrayEquals(raw, back);
        return new Encoded(ChunkFormat.header(out, n, "c").codec(), n);
    }

    @Test
    void floatFieldsGoOverPlanesAndComeOutSmallerThanPlainZstd() throws Exception {
        long planes = 0;
        long plain = 0;
        for (int i = 0; i < 40; i++) {
            byte[] f = field(i);
            Encoded e = encode(both, f);
            assertEquals(Codecs.PLANES_ID, e.codec(), "field " + i);
            planes += e.length();
            plain += encode(plainOnly, f).length();
        }
        // Plain zstd finds only the literals' skew (about 1.07 on such fields); over planes the slowly changing
        // high bytes become runs.
        assertTrue(planes < 0.85 * plain, planes + " bytes over planes against " + plain + " plain");
    }

    @Test
    void textStaysPlainRandomStaysRawAndAThreadSwitchesBackWhenItsDataChangesKind() throws Exception {
        for (int i = 0; i < 20; i++) {
            assertEquals(Codecs.ZSTD_ID, encode(both, text(i)).codec(), "text " + i);
            assertEquals(Codecs.RAW_ID, encode(both, random(i)).codec(), "random " + i);
        }
        for (int i = 0; i < 20; i++) { // this thread now favours planes
            assertEquals(Codecs.PLANES_ID, encode(both, field(i)).codec());
        }
        long mixed = 0;
        long plain = 0;
        for (int i = 0; i < 40; i++) { // text after fields: compressed over planes it grows, so the check switches back
            byte[] t = text(100 + i);
            mixed += encode(both, t).length();
            plain += encode(plainOnly, t).length();
            if (i > 0) {
                assertEquals(Codecs.ZSTD_ID, encode(both, text(200 + i)).codec(), "text " + i + " after fields");
            }
        }
        assertTrue(mixed <= plain * 1.01, mixed + " against " + plain + ": text after fields must not stay over planes");
    }

    @Test
    void withoutAPlanesCodecNothingChanges() throws Exception {
        for (int i = 0; i < 5; i++) {
            assertEquals(Codecs.ZSTD_ID, encode(plainOnly, field(i)).codec());
        }
    }

    @Test
    void aChunkOfNoiseOrTextBetweenFieldsDoesNotKeepTheNextFieldsOffPlanes() throws Exception {
        // A worker moves from file to file: fields, then the random bytes or the text of the next file, then fields again.
        for (int i = 0; i < 5; i++) {
            assertEquals(Codecs.PLANES_ID, encode(both, field(i)).codec());
        }
        assertEquals(Codecs.RAW_ID, encode(both, random(1)).codec());
        assertEquals(Codecs.PLANES_ID, encode(both, field(10)).codec(), "fields right after noise");
        assertEquals(Codecs.ZSTD_ID, encode(both, text(1)).codec());
        assertEquals(Codecs.PLANES_ID, encode(both, field(11)).codec(), "fields right after text");
    }
}
