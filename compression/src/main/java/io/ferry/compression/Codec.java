package io.ferry.compression;

/**
 * A block compressor for whole chunks. Implementations are thread-safe: each call may come
 * from any worker thread, and they keep per-thread contexts where the library needs them.
 */
public interface Codec {
    /** The codec id stored in the chunk header (see {@code docs/formats/chunk.md}). */
    int id();

    String name();

    /** An upper bound of the compressed size of {@code rawLength} bytes. */
    int maxCompressedLength(int rawLength);

    /**
     * Compresses {@code src[srcOff, srcOff+len)} into {@code dst} at {@code dstOff}, which has room
     * for {@link #maxCompressedLength}; returns the compressed length.
     */
    int compress(byte[] src, int srcOff, int len, byte[] dst, int dstOff);

    /**
     * Decompresses exactly {@code rawLength} bytes into {@code dst}; throws
     * {@link IllegalArgumentException} when the input is not a valid frame of that length.
     */
    void decompress(byte[] src, int srcOff, int len, byte[] dst, int dstOff, int rawLength);
}
