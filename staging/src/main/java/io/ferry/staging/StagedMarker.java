package io.ferry.staging;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Optional;

/**
 * The bytes of a {@code .staged-<rank>} file that carries the cache's check of its copy
 * ({@link LocalCache#markStaged(io.ferry.model.ImageRef, PushResult)}): {@code "FCK1"}, the
 * manifest's 32-byte SHA-256, the number of chunks as a big-endian int32, then each chunk's
 * CRC32C as a big-endian int32, in manifest order.
 */
final class StagedMarker {
    private static final byte[] MAGIC = {'F', 'C', 'K', '1'};

    private StagedMarker() {}

    static ByteBuffer encode(String manifestSha256, int[] chunkCrc32c) {
        byte[] sha = HexFormat.of().parseHex(manifestSha256);
        ByteBuffer b = ByteBuffer.allocate(4 + 32 + 4 + 4 * chunkCrc32c.length);
        b.put(MAGIC).put(sha).putInt(chunkCrc32c.length);
        for (int c : chunkCrc32c) {
            b.putInt(c);
        }
        return b.flip();
    }

    /** The check in {@code bytes}; empty when they hold none (an empty marker) or not a whole one. */
    static Optional<LocalCache.StagedCheck> decode(byte[] bytes) {
        if (bytes.length < 40 || !Arrays.equals(bytes, 0, 4, MAGIC, 0, 4)) {
            return Optional.empty();
        }
        ByteBuffer b = ByteBuffer.wrap(bytes);
        b.position(4);
        byte[] sha = new byte[32];
        b.get(sha);
        int n = b.getInt();
        if (n < 0 || b.remaining() != 4L * n) {
            return Optional.empty();
        }
        int[] crc = new int[n];
        for (int i = 0; i < n; i++) {
            crc[i] = b.getInt();
        }
        return Optional.of(new LocalCache.StagedCheck(HexFormat.of().formatHex(sha), crc));
    }
}
