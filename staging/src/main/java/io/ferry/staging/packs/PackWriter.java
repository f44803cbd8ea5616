package io.ferry.staging.packs;

import io.ferry.model.ChunkId;
import io.ferry.model.CrashPoint;
import io.ferry.stores.Store;
import io.ferry.stores.StoreException;

import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Appends the blob records of one push to packs and writes each full pack with one durable
 * put: one fsync (POSIX), one hsync (HDFS) or one PUT (S3) per pack of {@code packSize}
 * stored bytes, not per blob. Workers append concurrently; the one whose record fills a pack
 * writes it, while the others go on filling the next. At most {@code alive} packs exist at once,
 * filling or being written (each by the worker that filled it): several
 * durable puts in flight keep a queued disk or a remote store busy, where one fsync at a time
 * waits out each flush alone. An append waits when the store is slower than the workers, which
 * bounds memory at {@code alive x packSize}.
 *
 * <p>A pack is named by 256 random bits, fixed when it is opened, so a blob's place is known
 * at once; its contents are checked by each record's CRC32C and blob SHA-256 and by the
 * trailer's CRC32C, not by its name. Thread-safe.
 */
public final class PackWriter {
    private static final SecureRandom RANDOM = new SecureRandom();
    private final Store store;
    private final int packSize;
    private final Semaphore alive;
    /** Buffers of packs written, filled again by the next packs: a writer allocates at most {@code alive} of them. */
    private final ConcurrentLinkedQueue<ByteBuffer> spare =
            new ConcurrentLinkedQueue<>();
    /** Whether packs are filled in direct memory ({@link PackBuffers}), which the store writes without a copy. */
    private final boolean direct;
    private final AtomicInteger written = new AtomicInteger();
    private final AtomicLong writtenBytes = new AtomicLong();
    private PackBuilder open; // guarded by this

    /** A writer that holds at most two packs: one filling, one being written (gc and quarantine copies). */
    public PackWriter(Store store, int packSize) {
        this(store, packSize, 2);
    }

    /** @param alive packs held at once, at least 2: one filling, the others being written */
    public PackWriter(Store store, int packSize, int alive) {
        if (alive < 2) {
            throw new IllegalArgumentException("a pack writer holds at least 2 packs, got " + alive);
        }
        this.store = store;
        this.packSize = packSize;
        this.alive = new Semaphore(alive);
        this.direct = store != null && store.putsDirectMemory();
    }

    /** Where a record went: its pack's name and offset. */
    public record Placed(String pack, int offset) {}

    /**
     * Appends the record {@code src[off, off + len)} of blob {@code id}. When the pack it fills
     * is full, this thread seals and writes that pack (durably) before returning.
     */
    public Placed append(ChunkId id, byte[] src, int off, int len) throws StoreException, InterruptedIOException {
        PackBuilder full = null;
        Placed placed;
        synchronized (this) {
            if (open == null) {
                open = openPack();
            } else if (!open.fits(len) && !open.isEmpty()) {
                full = open;
                open = openPack();
            }
            placed = new Placed(open.name(), open.append(id, src, off, len));
            if (open.size() >= packSize && full == null) {
                full = open;
                open = null; // the next append opens the next pack
            }
        }
        if (full != null) {
            write(full);
        }
        return placed;
    }

    /** Writes the pack being filled, if any, and lets go of the spare buffers; call once every append has returned. */
    public void finish() throws StoreException {
        PackBuilder last;
        synchronized (this) {
            last = open;
            open = null;
        }
        if (last != null) {
            write(last);
        }
        for (ByteBuffer b; (b = spare.poll()) != null; ) {
            if (direct) {
                PackBuffers.give(b);
            }
        }
    }

    /** Packs written. */
    public int packs() {
        return written.get();
    }

    /** Bytes of the packs written (headers and trailers included). */
    public long bytes() {
        return writtenBytes.get();
    }

    /** A new pack; waits (holding the lock, so every appender waits: backpressure) while too many are alive. */
    private PackBuilder openPack() throws InterruptedIOException {
        try {
            alive.acquire();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted waiting for a pack to be written");
        }
        byte[] name = new byte[ChunkId.LENGTH];
        RANDOM.nextBytes(name);
        // room for one record of the largest blob past the target size: a pack is closed once it passes packSize
        ByteBuffer buffer = spare.poll();
        if (buffer == null) {
            int capacity = packSize + (512 << 10);
            buffer = direct ? PackBuffers.take(capacity) : ByteBuffer.wrap(new byte[capacity]);
        }
        return new PackBuilder(HexFormat.of().formatHex(name), buffer);
    }

    private void write(PackBuilder b) throws StoreException {
        try {
            PackBuilder.Sealed s = b.seal();
            store.put(PackKeys.packKey(s.name()), s.bytes().duplicate().position(0).limit(s.length()));
            CrashPoint.reach("agent.pack-written");
            written.incrementAndGet();
            writtenBytes.addAndGet(s.length());
            spare.offer(s.bytes());
        } finally {
            alive.release();
        }
    }
}
