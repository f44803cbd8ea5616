package io.ferry.agent.capture.internal;

import io.ferry.model.DaemonThreads;

import com.sun.jna.LastErrorException;
import com.sun.jna.Memory;
import com.sun.jna.Pointer;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Copies frozen processes' memory out with {@code process_vm_readv} into native buffers,
 * which a second thread drains into {@link Sink}s. The buffers are allocated and touched
 * before the freeze, so the freeze pays for no page faults; when they hold the whole process,
 * {@link #read} returns as soon as the last byte is read and the process can be thawed while
 * the writer is still writing: the stall is then the copy out of the process and nothing
 * more. The writer waits until then (or until the buffers run out), so as not to share the
 * memory bandwidth with the reader during the freeze. A page the kernel refuses (past the end of a mapped file, a guard
 * page) is left as zeros and counted. Used by one capture: {@code read} for each process, then
 * {@link #finish}, then {@link #close}.
 */
public final class MemoryCopier implements AutoCloseable {
    /** Bytes per {@code process_vm_readv} call and per buffer. */
    public static final int PIECE = 4 << 20;
    private static final int MIN_BUFFERS = 4;

    /** Where copied bytes go; called on the copier's writer thread, in file-offset order. */
    public interface Sink {
        void write(ByteBuffer bytes, long fileOffset) throws IOException;
    }

    /** What a copy did: bytes copied out of the process, bytes of pages it could not read. */
    public record Copied(long bytes, long unreadable) {}

    private record Piece(Memory mem, int length, long fileOffset, Sink sink) {}

    private static final Piece END = new Piece(null, 0, 0, null);

    private final Memory[] buffers;
    private final BlockingQueue<Memory> free;
    private final BlockingQueue<Piece> full;
    private final AtomicReference<IOException> writeFailure = new AtomicReference<>();
    private final Thread writer;
    private final Memory iov = new Memory(32);
    /**
     * Opened at finish, or when the reader runs out of buffers: until then the writer leaves the
     * memory bus to the reader.
     */
    private final CountDownLatch writeGate = new CountDownLatch(1);
    private boolean finished;

    /** Buffers for up to {@code bufferBytes} (at least four pieces), allocated and touched now. */
    public MemoryCopier(long bufferBytes) {
        int n = (int) Math.max(MIN_BUFFERS, Math.min(Integer.MAX_VALUE - 1, bufferBytes / PIECE));
        buffers = new Memory[n];
        free = new ArrayBlockingQueue<>(n);
        full = new ArrayBlockingQueue<>(n + 1);
        for (int i = 0; i < n; i++) {
            buffers[i] = new Memory(PIECE);
            buffers[i].clear(); // fault every page in now, not during the freeze
            free.add(buffers[i]);
        }
        writer = DaemonThreads.start("ferry-proc-writer", this::drain);
    }

    /**
     * Reads each region {@code i} with {@code copied()} of {@code pid}, to go to
     * {@code offsets[i]} of {@code sink}; returns once all of it is read (not yet written).
     */
    public Copied read(int pid, List<ProcFs.Region> regions, long[] offsets, Sink sink) throws IOException {
        long bytes = 0;
        long unreadable = 0;
        for (int i = 0; i < regions.size(); i++) {
            ProcFs.Region r = regions.get(i);
            if (!r.copied()) {
                continue;
            }
            long at = r.start();
            while (at < r.end()) {
                Memory buf = free.poll();
                if (buf == null) {
                    writeGate.countDown(); // the buffers are full: writing must start for reading to go on
                    buf = take(free);
                }
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
                    put(new Piece(buf, (int) got, offsets[i] + (at - r.start()), sink));
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
        return new Copied(bytes, unreadable);
    }

    /** Waits until everything read has been written; rethrows the writer's failure. */
    public void finish() throws IOException {
        if (!finished) {
            finished = true;
            writeGate.countDown();
            put(END);
            try {
                writer.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("capture interrupted");
            }
        }
        if (writeFailure.get() != null) {
            throw writeFailure.get();
        }
    }

    private void drain() {
        try {
            writeGate.await();
            while (true) {
                Piece p = full.take();
                if (p == END) {
                    return;
                }
                try {
                    if (writeFailure.get() == null) {
                        p.sink().write(p.mem().getByteBuffer(0, p.length()), p.fileOffset());
                    }
                } catch (IOException e) {
                    writeFailure.set(e);
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

    private void put(Piece p) throws InterruptedIOException {
        try {
            full.put(p);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("capture interrupted");
        }
    }

    /** Stops the writer (after {@link #finish}, or abandoning what is queued) and frees the buffers. */
    @Override
    public void close() {
        if (!finished) {
            writeFailure.compareAndSet(null, new IOException("capture abandoned"));
            finished = true;
            writeGate.countDown();
            full.offer(END);
            try {
                writer.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        for (Memory m : buffers) {
            m.close();
        }
        iov.close();
    }
}
