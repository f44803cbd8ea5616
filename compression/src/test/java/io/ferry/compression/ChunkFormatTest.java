package io.ferry.compression;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ChunkFormatTest {
    private static final int SIZE = 64 * 1024;
    private final ChunkFormat format = new ChunkFormat(Codecs.zstd(1), 1.1);

    private static byte[] compressible() {
        byte[] b = new byte[SIZE];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (i % 97 < 60 ? 'a' + i % 7 : i);
        }
        return b;
    }

    private static byte[] random() {
        byte[] b = new byte[SIZE];
        new Random(42).nextBytes(b);
        return b;
    }

    private byte[] encode(byte[] raw) {
        byte[] out = new byte[format.maxObjectLength(raw.length)];
        return Arrays.copyOf(out, format.encode(raw, raw.length, out));
    }

    private static int decode(byte[] obj, byte[] raw, byte[] out) throws CorruptChunkException {
        return ChunkFormat.decode(obj, obj.length, Digests.sha256(raw, 0, raw.length), out, "c");
    }

    @Test
    void compressibleChunkIsStoredWithZstdAndRoundTrips() throws Exception {
        byte[] raw = compressible();
        byte[] obj = encode(raw);
        ChunkHeader h = ChunkFormat.header(obj, obj.length, "c");
        assertEquals(Codecs.ZSTD_ID, h.codec());
        assertTrue(obj.length < raw.length / 2, "compressed to " + obj.length);
        byte[] out = new byte[SIZE];
        assertEquals(SIZE, decode(obj, raw, out));
        assertArrayEquals(raw, out);
    }

    @Test
    void incompressibleChunkIsStoredRaw() throws Exception {
        byte[] raw = random();
        byte[] obj = encode(raw);
        assertEquals(Codecs.RAW_ID, ChunkFormat.header(obj, obj.length, "c").codec());
        assertEquals(ChunkHeader.LENGTH + SIZE, obj.length);
        byte[] out = new byte[SIZE];
        decode(obj, raw, out);
        assertArrayEquals(raw, out);
    }

    @Test
    void flippedStoredByteFailsTheCrc() {
        byte[] raw = compressible();
        byte[] obj = encode(raw);
        obj[obj.length - 3] ^= 0x10;
        CorruptChunkException e = assertThrows(CorruptChunkException.class, () -> decode(obj, raw, new byte[SIZE]));
        assertTrue(e.getMessage().contains("CRC32C mismatch: header 0x"), e.getMessage());
    }

    @Test
    void truncatedObjectIsCorrupt() {
        byte[] raw = random();
        byte[] obj = Arrays.copyOf(encode(raw), 1000);
        CorruptChunkException e = assertThrows(CorruptChunkException.class, () -> decode(obj, raw, new byte[SIZE]));
        assertTrue(e.getMessage().contains("truncated"), e.getMessage());
        assertThrows(CorruptChunkException.class, () -> decode(Arrays.copyOf(obj, 7), raw, new byte[SIZE]));
    }

    @Test
    void badMagicIsCorrupt() {
        byte[] raw = random();
        byte[] obj = encode(raw);
        obj[0] = 'X';
        CorruptChunkException e = assertThrows(CorruptChunkException.class, () -> decode(obj, raw, new byte[SIZE]));
        assertTrue(e.getMessage().contains("bad magic"), e.getMessage());
    }

    @Test
    void wrongContentForTheNameFailsTheSha() {
        byte[] raw = random();
        byte[] obj = encode(raw);
        byte[] other = compressible();
        CorruptChunkException e = assertThrows(CorruptChunkException.class, () -> decode(obj, other, new byte[SIZE]));
        assertTrue(e.getMessage().contains("SHA-256 mismatch: expected " + Digests.hex(Digests.sha256(other, 0, SIZE))),
                e.getMessage());
    }

    @Test
    void garbageZstdFrameWithValidCrcIsCorrupt() {
        byte[] raw = compressible();
        byte[] obj = encode(raw);
        obj[ChunkHeader.LENGTH + 1] ^= 0x7f;
        CRC32C crc = new CRC32C();
        crc.update(obj, ChunkHeader.LENGTH, obj.length - ChunkHeader.LENGTH);
        ByteBuffer.wrap(obj).putInt(16, (int) crc.getValue());
        assertThrows(CorruptChunkException.class, () -> decode(obj, raw, new byte[SIZE]));
    }

    /**
     * LZ4 blocks whose every byte is garbage but whose CRC32C matches (as a bug in a writer would
     * leave them): each is refused as corrupt through the safe decoder, or gives back exactly the
     * named bytes; never another exception, nor bytes out of bounds. And a block of the wrong length is refused too.
     */
    @Test
    void garbageLz4BlocksWithValidCrcAreCorrupt() {
        Random rnd = new Random(3);
        byte[] lz4 = new byte[SIZE];
        int n = Codecs.lz4().compress(compressible(), 0, SIZE, lz4, 0);
        int refused = 0;
        for (int i = 0; i < 500; i++) {
            byte[] body = i % 2 == 0 ? new byte[1 + rnd.nextInt(4096)] : Arrays.copyOf(lz4, n);
            if (i % 2 == 0) {
                rnd.nextBytes(body);
            } else {
                body[rnd.nextInt(n)] ^= (byte) (1 + rnd.nextInt(255));
            }
            byte[] obj = new byte[ChunkHeader.LENGTH + body.length];
            System.arraycopy(body, 0, obj, ChunkHeader.LENGTH, body.length);
            CRC32C crc = new CRC32C();
            crc.update(body);
            new ChunkHeader(ChunkHeader.VERSION, Codecs.LZ4_ID, 0, SIZE, body.length, (int) crc.getValue())
                    .writeTo(obj, 0);
            byte[] back = new byte[SIZE];
            try {
                decode(obj, compressible(), back);
            } catch (CorruptChunkException expected) {
                refused++;
                continue;
            }
            // A flip can leave the block valid (an offset to equal bytes, say): then it gives back
            // exactly the named bytes.
            assertArrayEquals(compressible(), back, "block " + i);
        }
        assertTrue(refused > 450, refused + " of 500 refused");
        byte[] obj = new byte[ChunkHeader.LENGTH + n];
        System.arraycopy(lz4, 0, obj, ChunkHeader.LENGTH, n);
        CRC32C crc = new CRC32C();
        crc.update(lz4, 0, n);
        new ChunkHeader(ChunkHeader.VERSION, Codecs.LZ4_ID, 0, SIZE - 1, n, (int) crc.getValue()).writeTo(obj, 0);
        CorruptChunkException e = assertThrows(CorruptChunkException.class,
                () -> ChunkFormat.decode(obj, obj.length, new byte[32], new byte[SIZE], "c"));
        assertTrue(e.getMessage().contains("LZ4"), e.getMessage());
    }
}
