package io.ferry.staging;

import io.ferry.model.ImageRef;

import java.time.Duration;

/**
 * What a push did.
 *
 * @param rawBytes     bytes of the image's regular files
 * @param chunks       chunks in the image
 * @param zeroChunks   all-zero chunks (no I/O)
 * @param knownChunks  chunks already in the store, or repeated within the image (not written again)
 * @param newChunks    chunk objects written
 * @param storedBytes  bytes of the chunk objects written (headers included)
 */
public record PushResult(ImageRef image, long rawBytes, int files, long chunks, long zeroChunks, long knownChunks,
                         long newChunks, long storedBytes, String manifestSha256, Duration elapsed) {
    /** Raw megabytes (10^6) per second. */
    public double rawMBps() {
        return rawBytes / 1e6 / Math.max(1e-9, elapsed.toNanos() / 1e9);
    }
}
