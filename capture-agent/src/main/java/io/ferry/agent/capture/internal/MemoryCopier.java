package io.ferry.agent.capture.internal;

import com.sun.jna.LastErrorException;
import com.sun.jna.Memory;
import com.sun.jna.Pointer;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;

/**
 * Copies a frozen process's memory regions out with {@code process_vm_readv} into a few
 * native buffers, and hands each filled buffer to a {@link Sink} on a second thread, so
 * reading the next piece overlaps writing the last. A page the kernel refuses (a mapping
 * past the end of its file, a guard page) is left as zeros and counted. Single use.
 */
public final class MemoryCopier {
    /** Bytes per {@code process_vm_readv} call and per buffer. */
    public static final int PIECE = 4 << 20;
    private static final int BUFFERS = 4;

    /** Where copied bytes go; called on the copier's writer thread, in file-offset order. */
    public interface Sink {
        void write(ByteBuffer bytes, long fileOffset) throws IOException;
    }

    /** What a copy did: bytes copied out of the process, bytes of pages it could not read. */
    public record Copied(long bytes, long unreadable) {}

    private record Piece(Memory mem, int length, long fileOffset) {}

    private static final Piece END = new Piece(null, 0, 0);

    private MemoryCopier() {
    }

    /** Copies each region {@code i} with {@code copied()} to {@code offsets[i]} of the sink. */
    public static Copied copy(int pid, List<ProcFs.Region> regions, long[] offsets, Sink sink) throws IOException {
        BlockingQueue<Memory> free = new ArrayBlockingQueue<>(BUFFERS);
        BlockingQueue<Piece> full = new ArrayBlockingQueue<>(BUFFERS + 1);
        Memory[] all = new Memory[BUFFERS];
        for (int i = 0; i < BUFFERS; i++) {
            all[i] = new Memory(PIECE);
            free.add(all[i]);
        }
        java.util.concurrent.atomic.AtomicReference<IOException> writeFailure = new java.util.concurrent.atomic.AtomicReference<>();
        Thread writer = new Thread(() -> drain(full, free, sink, writeFailure), "ferry-proc-writer");
        writer.setDaemon(true);
        writer.start();
        long bytes = 0;
        long unreadable = 0;
        try (Memory iov = new Memory(32)) {
            for (int i = 0; i < regions.size(); i++) {
                ProcFs.Region r = regions.get(i);
                if (!r.copied()) {
                    continue;
                }
                long at = r.start();
                while (at < r.end()) {
                    Memory buf = take(free);
                    if (writeFailure.get() != null) {
                        free.add(buf);
                        throw writeFailure.get();
                    }
                    int want = (int) Math.min(PIECE, r.end() - at);
                    iov.setPointer(0, buf);
                    iov.setLong(8, want);
                    iov.setPointer(16, new Pointer(at));
                    iov.setLong(24, want);
                    long got;
                    try {
                        got = Libc.process_vm_readv(pid, iov, 1, iov.share(16), 1, 0);
                    } catch (LastErrorException e) {
                        if (e.getErrorCode() != Libc.EFAULT && e.getErrorCode() != Libc.EIO) {
                            free.add(buf);
                            throw Errors.of(e, pid, "read the memory of");
                        }
                        got = 0; // the first page is unreadable
                    }
                    if (got > 0) {
                        put(full, new Piece(buf, (int) got, offsets[i] + (at - r.start())));
                        bytes += got;
                    } else {
                        free.add(buf);
                    }
                    at += got;
                    if (got < want) { // skip the page that stopped the read; it stays a hole of zeros
                        long next = Math.min(r.end(), (at / ElfCore.PAGE + 1) * ElfCore.PAGE);
                        unreadable += next - at;
                        at = next;
                    }
                }
            }
        } finally {
            put(full, END);
            try {
                writer.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            for (Memory m : all) {
                m.close();
            }
        }
        if (writeFailure.get() != null) {
            throw writeFailure.get();
        }
        return new Copied(bytes, unreadable);
    }

    private static void drain(BlockingQueue<Piece> full, BlockingQueue<Memory> free, Sink sink,
                              java.util.concurrent.atomic.AtomicReference<IOException> failure) {
        try {
            while (true) {
                Piece p = full.take();
                if (p == END) {
                    return;
                }
                try {
                    if (failure.get() == null) {
                        sink.write(p.mem().getByteBuffer(0, p.length()), p.fileOffset());
                    }
                } catch (IOException e) {
                    failure.set(e);
                } finally {
                    free.add(p.mem());
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static Memory take(BlockingQueue<Memory> q) throws InterruptedIOException {
        try {
            return q.take();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("capture interrupted");
        }
    }

    private static void put(BlockingQueue<Piece> q, Piece p) throws InterruptedIOException {
        try {
            q.put(p);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("capture interrupted");
        }
    }
}
