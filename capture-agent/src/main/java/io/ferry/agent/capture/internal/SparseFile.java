package io.ferry.agent.capture.internal;

import io.ferry.model.OwnerOnly;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A core file being written: sized up front (so every page is a hole), then only the pages
 * that hold a non-zero byte are written. All-zero memory (untouched heap, BSS, stacks) costs
 * neither disk nor write time. Used by one writer thread at a time.
 */
public final class SparseFile implements MemoryCopier.Sink, AutoCloseable {
    private static final ByteBuffer ZERO_PAGE = ByteBuffer.allocateDirect(ElfCore.PAGE).asReadOnlyBuffer();
    private final FileChannel ch;
    private final AtomicLong zeroBytes = new AtomicLong();

    public SparseFile(Path file, long size) throws IOException {
        ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        OwnerOnly.restrict(file); // a process's memory: its owner's only, whatever the umask
        try (var raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(size);
        }
    }

    /** Writes {@code bytes} at {@code at} as it is (headers, notes). */
    public void writeAll(ByteBuffer bytes, long at) throws IOException {
        while (bytes.hasRemaining()) {
            at += ch.write(bytes, at);
        }
    }

    /** Writes the non-zero pages of {@code bytes}; zero pages stay holes. */
    @Override
    public void write(ByteBuffer bytes, long fileOffset) throws IOException {
        int len = bytes.remaining();
        int base = bytes.position();
        int runStart = -1;
        for (int off = 0; off < len; off += ElfCore.PAGE) {
            int n = Math.min(ElfCore.PAGE, len - off);
            boolean zero = bytes.slice(base + off, n).mismatch(ZERO_PAGE.slice(0, n)) == -1;
            if (zero) {
                zeroBytes.addAndGet(n);
                if (runStart >= 0) {
                    writeAll(bytes.slice(base + runStart, off - runStart), fileOffset + runStart);
                    runStart = -1;
                }
            } else if (runStart < 0) {
                runStart = off;
            }
        }
        if (runStart >= 0) {
            writeAll(bytes.slice(base + runStart, len - runStart), fileOffset + runStart);
        }
    }

    public long zeroBytes() {
        return zeroBytes.get();
    }

    @Override
    public void close() throws IOException {
        ch.close();
    }
}
