package io.ferry.cli;

import io.ferry.model.DaemonThreads;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;

/**
 * What a command {@code ferry daemon} serves sends its client ({@code docs/formats/daemon.md}): output
 * and error frames, then the exit frame, written to the socket by one thread of the line's own. Whatever
 * thread prints (the serving thread; a staging worker drawing the progress bar or logging a store's
 * retry) only queues a frame. A thread interrupted while it wrote to the channel itself would close
 * the channel (NIO's channels are interruptible) and the client would lose the rest of its command:
 * that happened when a failed push's workers were interrupted while one logged a retry. At most
 * {@link #PENDING} frames wait; a printer waits for room while the client reads slowly. Thread-safe.
 */
final class ClientLine implements AutoCloseable {
    static final int PENDING = 64;
    /** Largest payload of one frame. */
    static final int FRAME = 64 * 1024;
    private static final byte[] END = new byte[0];
    private final SocketChannel ch;
    private final BlockingQueue<byte[]> frames = new ArrayBlockingQueue<>(PENDING);
    private final Thread writer;
    private volatile IOException failed;
    private volatile boolean closed;

    ClientLine(SocketChannel ch) {
        this.ch = ch;
        this.writer = DaemonThreads.start("ferry-daemon-line", this::drain);
    }

    /**
     * The client's stdout ({@link ThinClient#OUT}) or stderr ({@link ThinClient#ERR}) as a stream of frames on this
     * line.
     */
    OutputStream stream(byte type) {
        return new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                while (len > 0) {
                    int n = Math.min(len, FRAME);
                    send(ByteBuffer.allocate(5 + n).put(type).putInt(n).put(b, off, n).array());
                    off += n;
                    len -= n;
                }
            }
        };
    }

    /**
     * Sends the exit frame after every frame queued before it, waits until the line has written them, and closes the
     * line.
     */
    void exit(int code) throws IOException {
        send(ByteBuffer.allocate(5).put(ThinClient.EXIT).putInt(code).array());
        close();
        if (failed != null) {
            throw new IOException("the client went before its exit code was sent: " + failed.getMessage(), failed);
        }
    }

    private void send(byte[] frame) throws IOException {
        if (closed) {
            throw new IOException("the command's line to its client is closed");
        }
        IOException f = failed;
        if (f != null) {
            throw new IOException("the client is gone: " + f.getMessage(), f);
        }
        if (frames.offer(frame)) { // room: even an interrupted printer's line goes out
            return;
        }
        try {
            frames.put(frame);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // PrintWriter keeps it set, and the command sees it
            throw new InterruptedIOException("interrupted waiting for the client to read");
        }
    }

    private void drain() {
        while (true) {
            byte[] f;
            try {
                f = frames.take();
            } catch (InterruptedException e) {
                return; // nothing interrupts this thread
            }
            if (f == END) {
                return;
            }
            if (failed == null) {
                try {
                    ThinClient.writeFully(ch, f);
                } catch (IOException e) {
                    failed = e; // the client went: later frames are dropped, so no printer waits for room
                }
            }
        }
    }

    /** Ends the line once the frames queued so far are written (or dropped, the client gone); later frames fail. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        boolean interrupted = false; // the client went mid-command: the line still ends in order
        while (!frames.offer(END)) {
            try {
                frames.put(END);
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        while (writer.isAlive()) {
            try {
                writer.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
