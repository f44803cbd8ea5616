package io.ferry.compression;

import java.nio.ByteBuffer;

/**
 * The 20-byte header of a chunk object (big-endian; see {@code docs/formats/chunk.md}):
 * magic "FRYC", format version, codec id, flags, raw length, stored length, CRC32C of the
 * stored bytes.
 */
public record ChunkHeader(int version, int codec, int flags, int rawLength, int storedLength, int crc32c) {
    public static final int LENGTH = 20;
    public static final int MAGIC = 0x46525943; // "FRYC"
    public static final int VERSION = 1;

    void writeTo(byte[] dst, int off) {
        ByteBuffer.wrap(dst, off, LENGTH).putInt(MAGIC).put((byte) version).put((byte) codec)
                .putShort((short) flags).putInt(rawLength).putInt(storedLength).putInt(crc32c);
    }

    /** Parses a header; throws {@link IllegalArgumentException} naming what is wrong. */
    static ChunkHeader parse(byte[] src, int off, int len) {
        if (len < LENGTH) {
            throw new IllegalArgumentException("object of " + len + " bytes is shorter than the " + LENGTH
                    + "-byte header");
        }
        ByteBuffer b = ByteBuffer.wrap(src, off, LENGTH);
        int magic = b.getInt();
        if (magic != MAGIC) {
            throw new IllegalArgumentException(String.format("bad magic 0x%08x (want 0x%08x 'FRYC')", magic, MAGIC));
        }
        int version = b.get() & 0xff;
        if (version != VERSION) {
            throw new IllegalArgumentException("unsupported chunk format version " + version);
        }
        int codec = b.get() & 0xff;
        int flags = b.getShort() & 0xffff;
        if (flags != 0) {
            throw new IllegalArgumentException(String.format("unknown flags 0x%04x", flags));
        }
        int raw = b.getInt();
        int stored = b.getInt();
        if (raw < 0 || stored < 0) {
            throw new IllegalArgumentException("negative length in header");
        }
        return new ChunkHeader(version, codec, flags, raw, stored, b.getInt());
    }
}
