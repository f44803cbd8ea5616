package io.ferry.staging.packs;

import io.ferry.stores.Store;

import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Direct memory for packs, aligned to {@link Store#DIRECT_ALIGNMENT}, for a store that writes it
 * without a copy ({@link Store#putsDirectMemory()}: a POSIX store with {@code O_DIRECT}). A pack
 * filled there is written as it is, where a heap pack is first copied into an aligned buffer:
 * that copy was 2.6% of a push's CPU on two cores.
 *
 * <p>Direct memory is freed only when the collector finds its buffer unreachable, which in a
 * daemon that pushes every few minutes can be long after; so the buffers a push lets go of are
 * kept for the next pushes of this JVM, up to {@link #KEPT} bytes (the default four packs in
 * flight of 16 MiB take 66 MiB), and the rest is dropped. Thread-safe.
 */
final class PackBuffers {
    /** Bytes of buffers kept between pushes, at most. */
    static final long KEPT = 256L << 20;
    private static final ConcurrentLinkedQueue<ByteBuffer> FREE = new ConcurrentLinkedQueue<>();
    private static final AtomicLong FREE_BYTES = new AtomicLong();

    private PackBuffers() {}

    /** A buffer of at least {@code capacity} bytes, aligned, big-endian; its contents are stale. */
    static ByteBuffer take(int capacity) {
        for (ByteBuffer b; (b = FREE.poll()) != null; ) {
            FREE_BYTES.addAndGet(-b.capacity());
            if (b.capacity() >= capacity) {
                return b;
            }
            // too small for this pack size: dropped, the collector frees it
        }
        return ByteBuffer.allocateDirect(capacity + Store.DIRECT_ALIGNMENT).alignedSlice(Store.DIRECT_ALIGNMENT);
    }

    /** Gives {@code b} back for later packs, or drops it when {@link #KEPT} bytes are kept already. */
    static void give(ByteBuffer b) {
        if (FREE_BYTES.addAndGet(b.capacity()) <= KEPT) {
            FREE.offer(b);
        } else {
            FREE_BYTES.addAndGet(-b.capacity());
        }
    }
}
