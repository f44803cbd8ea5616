package io.ferry.staging.internal;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;

/**
 * A fixed set of chunk buffers. Taking blocks while all are in use, which is the pipeline's
 * backpressure: the reader cannot run ahead of the workers by more than the pool holds, so
 * memory stays flat whatever the image size. Thread-safe.
 */
public final class BufferPool {
    private final BlockingQueue<byte[]> free;

    public BufferPool(int count, int size) {
        free = new ArrayBlockingQueue<>(count);
        for (int i = 0; i < count; i++) {
            free.add(new byte[size]);
        }
    }

    public byte[] take() throws InterruptedException {
        return free.take();
    }

    public void give(byte[] buffer) {
        if (!free.offer(buffer)) {
            throw new IllegalStateException("buffer returned twice");
        }
    }

    /** Lets go of the buffers once an operation no longer needs any (its manifest is then built in that room). */
    public void release() {
        free.clear();
    }

    public int capacity() {
        return free.remainingCapacity() + free.size();
    }
}
