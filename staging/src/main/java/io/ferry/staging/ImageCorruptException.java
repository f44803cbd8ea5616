package io.ferry.staging;

import java.io.IOException;

/**
 * An image that cannot be restored as recorded: a corrupted or missing chunk, a file whose
 * digest does not match, a manifest that disagrees with its commit marker. The message names
 * the job, generation, rank, file and chunk.
 */
public class ImageCorruptException extends IOException {
    public ImageCorruptException(String message, Throwable cause) {
        super(message, cause);
    }
}
