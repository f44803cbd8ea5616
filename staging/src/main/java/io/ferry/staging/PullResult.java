package io.ferry.staging;

import io.ferry.model.ImageRef;

import java.nio.file.Path;
import java.time.Duration;

/**
 * What a pull did.
 *
 * @param fetchedBytes stored bytes of the chunks or blob records the image needed
 * @param readBytes    bytes read from the store for them: a pack-layout pull reads records that
 *                     lie close together with one read, the other records between them included
 * @param committed    whether the image's snapshot had its commit marker; an uncommitted image
 *                     was pulled on request and must not be used for a restart
 */
public record PullResult(ImageRef image, Path directory, long rawBytes, int files, long fetchedChunks,
                         long fetchedBytes, long readBytes, boolean committed, Duration elapsed) {
    public double rawMBps() {
        return rawBytes / 1e6 / Math.max(1e-9, elapsed.toNanos() / 1e9);
    }
}
