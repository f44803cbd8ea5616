package io.ferry.compression;

import java.security.MessageDigest;
import java.util.zip.CRC32C;

/**
 * Encodes raw chunk bytes into chunk objects and decodes them back, verifying everything.
 * Thread-safe: decoding is stateless; encoding with a planes or an LZ4 codec keeps, per thread,
 * which codec the data it is compressing favours ({@link PlanesChoice}, {@link Lz4Choice}).
 */
public final class ChunkFormat {
    private final Codec codec;
    private final Codec planes;
    private final Codec lz4;
    private final double minRatio;
    private final ThreadLocal<PlanesChoice> choices = ThreadLocal.withInitial(PlanesChoice::new);
    private final ThreadLocal<Lz4Choice> lz4Choices = ThreadLocal.withInitial(Lz4Choice::new);

    /**
     * @param codec    the codec to try on each chunk
     * @param minRatio raw/compressed ratio under which a chunk is stored raw (e.g. 1.1: compress
     *                 only when it saves at least ~9%), so incompressible data costs no decode time
     */
    public ChunkFormat(Codec codec, double minRatio) {
        this(codec, null, minRatio);
    }

    /**
     * @param planes the same codec over the bytes regrouped into planes ({@link Codecs#zstdPlanes}),
     *               tried where {@code codec} shrinks a chunk little; null never tries it
     */
    public ChunkFormat(Codec codec, Codec planes, double minRatio) {
        this(codec, planes, null, minRatio);
    }

    /**
     * @param lz4 LZ4 ({@link Codecs#lz4}), kept for chunks it halves ({@link Lz4Choice}): text and
     *            heap pages are then compressed and decoded faster, for more bytes; null never uses it
     */
    public ChunkFormat(Codec codec, Codec planes, Codec lz4, double minRatio) {
        if (!(minRatio >= 1.0)) {
            throw new IllegalArgumentException("minimum compression ratio must be >= 1.0, got " + minRatio);
        }
        this.codec = codec;
        this.planes = planes;
        this.lz4 = lz4;
        this.minRatio = minRatio;
    }

    /** Size of a buffer that holds any chunk object of {@code rawLength} raw bytes. */
    public int maxObjectLength(int rawLength) {
        int compressed = codec.maxCompressedLength(rawLength);
        if (planes != null) {
            compressed = Math.max(compressed, planes.maxCompressedLength(rawLength));
        }
        if (lz4 != null) {
            compressed = Math.max(compressed, lz4.maxCompressedLength(rawLength));
        }
        return ChunkHeader.LENGTH + Math.max(rawLength, compressed);
    }

    /**
     * Writes the chunk object for {@code raw[0, len)} into {@code out} (sized by
     * {@link #maxObjectLength}) and returns the object's length.
     */
    public int encode(byte[] raw, int len, byte[] out) {
        return encode(raw, 0, len, out);
    }

    /** {@link #encode(byte[], int, byte[])} of {@code raw[off, off + len)}: a blob cut from a larger buffer. */
    public int encode(byte[] raw, int off, int len, byte[] out) {
        int body = ChunkHeader.LENGTH;
        Codec used = codec;
        Lz4Choice fast = lz4 == null ? null : lz4Choices.get();
        int stored = fast == null ? -1 : fast.tryLz4(lz4, raw, off, len, out, body);
        if (stored >= 0) {
            used = lz4;
        } else if (planes == null) {
            stored = codec.compress(raw, off, len, out, body);
        } else {
            PlanesChoice choice = choices.get();
            stored = choice.compress(codec, planes, lz4 != null ? lz4 : codec, raw, off, len, out, body,
                    maxObjectLength(len));
            used = choice.usedPlanes() ? planes : codec;
        }
        if (fast != null && used != lz4) {
            fast.zstdDid(len, stored);
        }
        if (stored * minRatio > len) {
            used = Codecs.raw();
            stored = used.compress(raw, off, len, out, body);
        }
        CRC32C crc = new CRC32C();
        crc.update(out, body, stored);
        new ChunkHeader(ChunkHeader.VERSION, used.id(), 0, len, stored, (int) crc.getValue()).writeTo(out, 0);
        return body + stored;
    }

    /** Reads the header of an object; throws {@link CorruptChunkException} if it is invalid. */
    public static ChunkHeader header(byte[] object, int len, String name) throws CorruptChunkException {
        return header(object, 0, len, name);
    }

    /** {@link #header(byte[], int, String)} of an object at {@code object[off, off + len)} (a pack record). */
    public static ChunkHeader header(byte[] object, int off, int len, String name) throws CorruptChunkException {
        try {
            return ChunkHeader.parse(object, off, len);
        } catch (IllegalArgumentException e) {
            throw new CorruptChunkException(name, e.getMessage());
        }
    }

    /**
     * Verifies and decodes a chunk object into {@code rawOut}, returning the raw length.
     * Checks, in order: header, stored length against the object's length (truncation),
     * CRC32C of the stored bytes, decompression to the header's raw length, and the SHA-256
     * of the raw bytes against {@code expectedSha256} (the chunk's name).
     */
    public static int decode(byte[] object, int len, byte[] expectedSha256, byte[] rawOut, String name)
            throws CorruptChunkException {
        return decode(object, 0, len, expectedSha256, rawOut, name);
    }

    /**
     * {@link #decode(byte[], int, byte[], byte[], String)} of an object at {@code object[off, off + len)}:
     * a record of a pack read together with its neighbours.
     */
    public static int decode(byte[] object, int off, int len, byte[] expectedSha256, byte[] rawOut, String name)
            throws CorruptChunkException {
        int n = decodeUnnamed(object, off, len, rawOut, name);
        byte[] actual = Digests.sha256(rawOut, 0, n);
        if (!MessageDigest.isEqual(actual, expectedSha256)) {
            throw new CorruptChunkException(name, "SHA-256 mismatch: expected " + Digests.hex(expectedSha256)
                    + ", computed " + Digests.hex(actual));
        }
        return n;
    }

    /**
     * Every check of {@link #decode(byte[], int, int, byte[], byte[], String)} but the last: the raw
     * bytes are not compared with a name. For a caller that names blobs otherwise (a keyed hash, when
     * records are encrypted) and checks the name itself.
     */
    public static int decodeUnnamed(byte[] object, int off, int len, byte[] rawOut, String name)
            throws CorruptChunkException {
        ChunkHeader h = header(object, off, len, name);
        if (ChunkHeader.LENGTH + (long) h.storedLength() != len) {
            throw new CorruptChunkException(name, "header says " + h.storedLength() + " stored bytes, object holds "
                    + (len - ChunkHeader.LENGTH) + " (truncated or padded)");
        }
        if (h.rawLength() > rawOut.length) {
            throw new CorruptChunkException(name,
                    "raw length " + h.rawLength() + " exceeds the chunk size " + rawOut.length);
        }
        CRC32C crc = new CRC32C();
        crc.update(object, off + ChunkHeader.LENGTH, h.storedLength());
        if ((int) crc.getValue() != h.crc32c()) {
            throw new CorruptChunkException(name, String.format("CRC32C mismatch: header 0x%08x, computed 0x%08x",
                    h.crc32c(), (int) crc.getValue()));
        }
        try {
            Codecs.forId(h.codec()).decompress(object, off + ChunkHeader.LENGTH, h.storedLength(), rawOut,
                    0, h.rawLength());
        } catch (IllegalArgumentException e) {
            throw new CorruptChunkException(name, e.getMessage());
        }
        return h.rawLength();
    }
}
