package io.ferry.compression.internal;

import io.ferry.compression.Codec;
import io.ferry.compression.Codecs;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Exception;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;

/**
 * LZ4's block format (no frame: the chunk header carries both lengths and a CRC32C) through
 * lz4-java, its native library where it loads, else its Java port. Decoding uses the safe
 * decompressor, which refuses a malformed block instead of reading or writing out of bounds.
 * lz4-java's compressors and decompressors are stateless, so one of each serves every thread.
 */
public final class Lz4Codec implements Codec {
    private static final LZ4Factory FACTORY = LZ4Factory.fastestInstance();
    private final LZ4Compressor compressor = FACTORY.fastCompressor();
    private final LZ4SafeDecompressor decompressor = FACTORY.safeDecompressor();

    @Override
    public int id() {
        return Codecs.LZ4_ID;
    }

    @Override
    public String name() {
        return "lz4";
    }

    @Override
    public int maxCompressedLength(int rawLength) {
        return compressor.maxCompressedLength(rawLength);
    }

    @Override
    public int compress(byte[] src, int srcOff, int len, byte[] dst, int dstOff) {
        return compressor.compress(src, srcOff, len, dst, dstOff, dst.length - dstOff);
    }

    @Override
    public void decompress(byte[] src, int srcOff, int len, byte[] dst, int dstOff, int rawLength) {
        int n;
        try {
            n = decompressor.decompress(src, srcOff, len, dst, dstOff, rawLength);
        } catch (LZ4Exception e) {
            throw new IllegalArgumentException("invalid LZ4 block: " + e.getMessage(), e);
        }
        if (n != rawLength) {
            throw new IllegalArgumentException("LZ4 block holds " + n + " bytes, header says " + rawLength);
        }
    }
}
