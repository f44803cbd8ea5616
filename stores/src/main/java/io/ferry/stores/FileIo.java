package io.ferry.stores;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

/**
 * Reads and writes between a {@link FileChannel} and a heap array through a direct buffer of
 * {@link #SLICE} bytes that each thread owns, instead of the JDK's temporary direct buffer.
 *
 * <p>Why: a read into a heap buffer goes into a temporary direct buffer first and is copied from
 * there. The JDK keeps that buffer per thread at the largest size the thread ever used, so once a
 * thread read or wrote 1 MiB at a time (a pack, a span), every later call copies through a buffer
 * larger than a core's cache. Here the buffer is one size, 256 KiB, under the L2 cache of common
 * x86 and Arm server cores. What it saves is small: reading the cached 1 GiB seeded image into
 * 4 MiB heap arrays took 6-11% more of a thread's CPU through the JDK's buffer with 4 MiB reads,
 * or 256 KiB reads after one 4 MiB read, and 1-6% more with 1 MiB reads, than through this one
 * ({@code benchmarks/run-file-read.sh}, two runs; docs/benchmarks.md gives the table).
 * Thread-safe: each thread has its own buffer.
 */
public final class FileIo {
    /**
     * Bytes per system call, and the size of each thread's buffer: under a core's L2 cache on
     * common x86 and Arm servers.
     */
    public static final int SLICE = 256 << 10;
    private static final ThreadLocal<ByteBuffer> BUFFERS =
            ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(SLICE));

    private FileIo() {}

    /**
     * Reads from the channel's position into {@code dst[off, off + len)} until it is full or the
     * file ends; returns the bytes read (less than {@code len} only at the end of the file).
     */
    public static int read(FileChannel ch, byte[] dst, int off, int len) throws IOException {
        ByteBuffer b = BUFFERS.get();
        int done = 0;
        while (done < len) {
            b.clear().limit(Math.min(SLICE, len - done));
            int n = ch.read(b);
            if (n < 0) {
                break;
            }
            b.flip().get(dst, off + done, n);
            done += n;
        }
        return done;
    }

    /**
     * Reads {@code dst[off, off + len)} from the channel at {@code pos}, without moving the
     * channel's position (safe from several threads).
     *
     * @throws EOFException if the file ends before {@code pos + len}
     */
    public static void readFully(FileChannel ch, long pos, byte[] dst, int off, int len) throws IOException {
        ByteBuffer b = BUFFERS.get();
        int done = 0;
        while (done < len) {
            b.clear().limit(Math.min(SLICE, len - done));
            int n = ch.read(b, pos + done);
            if (n < 0) {
                throw new EOFException("the file ends at " + ch.size() + " bytes, before " + (pos + len));
            }
            b.flip().get(dst, off + done, n);
            done += n;
        }
    }

    /**
     * Writes {@code src[off, off + len)} to the channel at {@code pos}, without moving its position
     * (safe from several threads).
     */
    public static void writeFully(FileChannel ch, long pos, byte[] src, int off, int len) throws IOException {
        if (pos < 0) {
            throw new IllegalArgumentException("negative position " + pos);
        }
        write(ch, pos, src, off, len);
    }

    /** Writes {@code src[off, off + len)} at the channel's position. */
    public static void write(FileChannel ch, byte[] src, int off, int len) throws IOException {
        write(ch, -1, src, off, len);
    }

    /** At {@code pos}, or at the channel's position where {@code pos} is negative. */
    private static void write(FileChannel ch, long pos, byte[] src, int off, int len) throws IOException {
        ByteBuffer b = BUFFERS.get();
        int done = 0;
        while (done < len) {
            int n = Math.min(SLICE, len - done);
            b.clear();
            b.put(src, off + done, n).flip();
            while (b.hasRemaining()) {
                if (pos < 0) {
                    ch.write(b);
                } else {
                    ch.write(b, pos + done + b.position());
                }
            }
            done += n;
        }
    }
}
