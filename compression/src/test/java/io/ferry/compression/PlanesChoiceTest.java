package io.ferry.compression;

import org.junit.jupiter.api.Test;

import static io.ferry.compression.Chunks.encode;
import static io.ferry.compression.Chunks.field;
import static io.ferry.compression.Chunks.random;
import static io.ferry.compression.Chunks.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PlanesChoiceTest {
    private final ChunkFormat both = new ChunkFormat(Codecs.zstd(1), Codecs.zstdPlanes(1), 1.02);
    private final ChunkFormat plainOnly = new ChunkFormat(Codecs.zstd(1), 1.02);

    @Test
    void floatFieldsGoOverPlanesAndComeOutSmallerThanPlainZstd() throws Exception {
        long planes = 0;
        long plain = 0;
        for (int i = 0; i < 40; i++) {
            byte[] f = field(i);
            Chunks.Encoded e = encode(both, f);
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
        assertTrue(mixed <= plain * 1.01,
                mixed + " against " + plain + ": text after fields must not stay over planes");
    }

    @Test
    void withoutAPlanesCodecNothingChanges() throws Exception {
        for (int i = 0; i < 5; i++) {
            assertEquals(Codecs.ZSTD_ID, encode(plainOnly, field(i)).codec());
        }
    }

    @Test
    void aChunkOfNoiseOrTextBetweenFieldsDoesNotKeepTheNextFieldsOffPlanes() throws Exception {
        // A worker moves from file to file: fields, then the random bytes or the text of the next
        // file, then fields again.
        for (int i = 0; i < 5; i++) {
            assertEquals(Codecs.PLANES_ID, encode(both, field(i)).codec());
        }
        assertEquals(Codecs.RAW_ID, encode(both, random(1)).codec());
        assertEquals(Codecs.PLANES_ID, encode(both, field(10)).codec(), "fields right after noise");
        assertEquals(Codecs.ZSTD_ID, encode(both, text(1)).codec());
        assertEquals(Codecs.PLANES_ID, encode(both, field(11)).codec(), "fields right after text");
    }
}
