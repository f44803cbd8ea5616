package io.ferry.compression;

import java.io.IOException;

/**
 * A chunk object whose bytes do not verify: bad header, truncated, CRC32C or SHA-256
 * mismatch. Names the chunk and, where checksums disagree, both values. Never retried from
 * the same copy: the caller drops it and tries another source.
 */
public class CorruptChunkException extends IOException {
    private final String chunk;

    public CorruptChunkException(String chunk, String problem) {
        super("corrupt chunk " + chunk + ": " + problem);
        this.chunk = chunk;
    }

    public String chunk() {
        return chunk;
    }
}
