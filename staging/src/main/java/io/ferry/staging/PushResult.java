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
 * @param chunkCrc32c  the CRC32C of every chunk, in manifest order (regular files as the manifest
 *                     lists them, each file's chunks in order): what the node-local cache keeps to
 *                     check its copy at a restart ({@link LocalCache#markStaged(ImageRef, PushResult)})
 */
public record PushResult(ImageRef image, long rawBytes, int files, long chunks, long zeroChunks, long knownChunks,
                         long newChunks, long storedBytes, String manifestSha256, Duration elapsed, int[] chunkCrc32c) {
    public PushResult(ImageRef image, long rawBytes, int files, long chunks, long zeroChunks, long knownChunks,
                      long newChunks, long storedBytes, String manifestSha256, Duration elapsed) {
        this(image, rawBytes, files, chunks, zeroChunks, knownChunks, newChunks, storedBytes, manifestSha256, elapsed,
                new int[0]);
    }

    /** Raw megabytes (10^6) per second. */
    public double rawMBps() {
        return rawBytes / 1e6 / Math.max(1e-9, elapsed.toNanos() / 1e9);
    }
}
