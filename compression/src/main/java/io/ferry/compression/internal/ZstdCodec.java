package io.ferry.compression.internal;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdCompressCtx;
import com.github.luben.zstd.ZstdDecompressCtx;
import com.github.luben.zstd.ZstdException;
import io.ferry.compression.Codec;
import io.ferry.compression.Codecs;

/**
 * zstd through zstd-jni. Contexts are reused per thread (creating one per chunk costs more
 * than compressing a chunk of zeros); each worker thread owns its own, so this is thread-safe.
 */
public final class ZstdCodec implements Codec {
    private final int level;
    private final ThreadLocal<ZstdCompressCtx> compressors;
    private static final ThreadLocal<ZstdDecompressCtx> DECOMPRESSORS = ThreadLocal.withInitial(ZstdDecompressCtx::new);

    public ZstdCodec(int level) {
        if (level < -7 || level > 22) {
            throw new IllegalArgumentException("zstd level must be within -7..22, got " + level);
        }
        this.level = level;
        this.compressors = ThreadLocal.withInitial(() -> new ZstdCompressCtx().setLevel(level));
    }

    @Override
    public int id() {
        return Codecs.ZSTD_ID;
    }

    @Override
    public String name() {
        return "zstd-" + level;
    }

    @Override
    public int maxCompressedLength(int rawLength) {
        return Math.toIntExact(Zstd.compressBound(rawLength));
    }

    @Override
    public int compress(byte[] src, int srcOff, int len, byte[] dst, int dstOff) {
        return compressors.get().compressByteArray(dst, dstOff, dst.length - dstOff, src, srcOff, len);
    }

    @Override
    public void decompress(byte[] src, int srcOff, int len, byte[] dst, int dstOff, int rawLength) {
        int n;
        try {
            n = DECOMPRESSORS.get().decompressByteArray(dst, dstOff, rawLength, src, srcOff, len);
        } catch (ZstdException e) {
            throw new IllegalArgumentException("invalid zstd frame: " + e.getMessage(), e);
        }
        if (n != rawLength) {
            throw new IllegalArgumentException("zstd frame holds " + n + " bytes, header says " + rawLength);
        }
    }
}
