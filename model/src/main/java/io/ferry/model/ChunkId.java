package io.ferry.model;

import java.util.Arrays;
import java.util.HexFormat;

/**
 * The name of a chunk: the SHA-256 of its raw bytes. A final class over 32 bytes (not a
 * record holding an array) so that equality and hashing are by value.
 *
 * <p>{@link #ZERO} is a sentinel for a chunk whose raw bytes are all zero: it is recorded
 * in manifests as {@code "zero"} and never stored. Immutable and thread-safe.
 */
public final class ChunkId {
    public static final int LENGTH = 32;
    /** An all-zero chunk; costs no I/O. */
    public static final ChunkId ZERO = new ChunkId(new byte[LENGTH]);
    private static final HexFormat HEX = HexFormat.of();

    private final byte[] bytes;
    private final int hash;

    private ChunkId(byte[] bytes) {
        this.bytes = bytes;
        this.hash = Arrays.hashCode(bytes);
    }

    /** Wraps a copy of a 32-byte SHA-256 digest. */
    public static ChunkId of(byte[] sha256) {
        if (sha256 == null || sha256.length != LENGTH) {
            throw new IllegalArgumentException("a chunk id is 32 bytes, got "
                    + (sha256 == null ? "null" : sha256.length));
        }
        return new ChunkId(sha256.clone());
    }

    /** Parses 64 lower- or upper-case hex digits, or {@code "zero"}. */
    public static ChunkId parse(String text) {
        if ("zero".equals(text)) {
            return ZERO;
        }
        if (text == null || text.length() != 2 * LENGTH) {
            throw new IllegalArgumentException("chunk id must be 64 hex digits or 'zero', got " + Names.quote(text));
        }
        try {
            return new ChunkId(HEX.parseHex(text));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("chunk id must be 64 hex digits or 'zero', got " + Names.quote(text), e);
        }
    }

    public boolean isZero() {
        return this == ZERO;
    }

    /** A copy of the digest. */
    public byte[] bytes() {
        return bytes.clone();
    }

    /** Whether {@code digest} equals this id, without copying. */
    public boolean matches(byte[] digest) {
        return Arrays.equals(bytes, digest);
    }

    /** Lower-case hex, or {@code "zero"} for {@link #ZERO}. */
    @Override
    public String toString() {
        return isZero() ? "zero" : HEX.formatHex(bytes);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ChunkId other && (isZero() == other.isZero()) && Arrays.equals(bytes, other.bytes);
    }

    @Override
    public int hashCode() {
        return hash;
    }
}
