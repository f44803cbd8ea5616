package io.ferry.staging.packs;

import io.ferry.model.ChunkId;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * One pack being filled in memory, on the heap or in direct memory ({@link PackBuffers}): records
 * are appended, then {@link #seal()} writes the trailer. Not thread-safe: {@link PackWriter}
 * appends under its lock.
 */
final class PackBuilder {
    private final String name;
    private final ByteBuffer bytes;
    private final List<PackFormat.Record> records = new ArrayList<>();
    private int end = PackFormat.HEADER;

    /** A pack filled into {@code buffer} (reused from an earlier pack: only the bytes written count; big-endian). */
    PackBuilder(String name, ByteBuffer buffer) {
        this.name = name;
        this.bytes = buffer;
        PackFormat.writeHeader(bytes);
    }

    String name() {
        return name;
    }

    /** Whether a record of {@code len} bytes and its trailer entry still fit. */
    boolean fits(int len) {
        return (long) end + len + PackFormat.trailerLength(records.size() + 1) <= bytes.capacity();
    }

    boolean isEmpty() {
        return records.isEmpty();
    }

    /** Stored bytes so far (header and records). */
    int size() {
        return end;
    }

    /** Appends {@code src[off, off + len)} as the record of blob {@code id}; returns its offset. */
    int append(ChunkId id, byte[] src, int off, int len) {
        int at = end;
        bytes.put(at, src, off, len);
        records.add(new PackFormat.Record(id, at, len));
        end += len;
        return at;
    }

    /** Writes the trailer; returns the pack's buffer and length. */
    Sealed seal() {
        int len = PackFormat.writeTrailer(bytes, end, records);
        return new Sealed(name, bytes, len, records.size());
    }

    /** A sealed pack: {@code bytes[0, length)}, absolute (the buffer's position and limit are not used). */
    record Sealed(String name, ByteBuffer bytes, int length, int records) {}
}
