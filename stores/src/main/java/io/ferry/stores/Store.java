package io.ferry.stores;

import java.io.Closeable;
import java.net.URI;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

/**
 * A durable store of immutable objects under '/'-separated keys (see {@link Keys}).
 *
 * <p>Guarantees every implementation keeps: an object becomes visible under its key only
 * whole (never half-written), and only once it is durable (fsync on POSIX, hsync on HDFS, a
 * completed PUT on S3). All methods are thread-safe. A method that throws
 * {@link TransientStoreException} may be retried as it is; every method is idempotent, so a
 * retry may repeat a call that in fact succeeded.
 */
public interface Store extends Closeable {
    URI uri();

    /**
     * Writes {@code data} (from its position to its limit) under {@code key}, replacing any
     * object there, durably and atomically. Retrying repeats the whole write.
     */
    void put(String key, ByteBuffer data) throws StoreException;

    /** Reads a whole object; {@link ObjectNotFoundException} if there is none. */
    byte[] get(String key) throws StoreException;

    /**
     * Reads an object into {@code dst}, at most {@code dst.length} bytes, and returns the
     * object's full length, which may exceed {@code dst.length} (then only a prefix was read).
     */
    int read(String key, byte[] dst) throws StoreException;

    /**
     * Reads {@code len} bytes of an object starting at byte {@code offset} into
     * {@code dst[dstOff..]}: one positional read on POSIX and HDFS, one ranged GET on S3 (a
     * restart reads only the pack records it needs). {@link ObjectNotFoundException} if there is
     * no object; a {@link PermanentStoreException} if it ends before {@code offset + len}.
     */
    void readRange(String key, long offset, byte[] dst, int dstOff, int len) throws StoreException;

    /**
     * Reads a whole object that should be at most {@code maxBytes} long (a manifest, a marker, a
     * pack): a longer one is refused with a {@link PermanentStoreException} naming its size and
     * the limit, before a buffer of its size is allocated, so a damaged or hostile object cannot
     * take the heap. One read for an object of up to 64 KiB, one more for the rest of a longer one.
     */
    default byte[] getAtMost(String key, int maxBytes) throws StoreException {
        byte[] first = new byte[Math.min(maxBytes, 64 * 1024)];
        int len = read(key, first);
        if (len <= first.length) {
            return len == first.length ? first : Arrays.copyOf(first, len);
        }
        if (len > maxBytes) {
            throw new PermanentStoreException(key + " in " + uri() + " is " + len
                    + " bytes, over the limit of " + maxBytes
                    + " for what it should hold: damaged, or not written by Ferry", null);
        }
        byte[] all = Arrays.copyOf(first, len);
        readRange(key, first.length, all, first.length, len - first.length);
        return all;
    }

    boolean exists(String key) throws StoreException;

    /** The length of an object in bytes (a stat, a HEAD); {@link ObjectNotFoundException} if there is none. */
    long size(String key) throws StoreException;

    /** All complete objects whose key starts with {@code prefix}, sorted. */
    List<String> list(String prefix) throws StoreException;

    /** Removes an object; removing an absent one is not an error. */
    void delete(String key) throws StoreException;

    /**
     * Deletes what interrupted puts left behind (a killed process, a crashed node) and that is
     * older than {@code olderThan}: a put in progress is never older than that, so none is
     * disturbed; returns how many (with {@code dryRun}, how many would go). Stores whose puts
     * leave nothing behind return 0.
     */
    default int deleteAbandoned(Duration olderThan, boolean dryRun) throws StoreException {
        return 0;
    }

    /** Retry and circuit-breaker counters; {@link StoreHealth#NONE} for stores without that layer. */
    default StoreHealth health() {
        return StoreHealth.NONE;
    }

    /**
     * Whether {@link #put} writes a large object held in direct memory aligned to {@link #DIRECT_ALIGNMENT}
     * without copying it (a POSIX store writing with {@code O_DIRECT}): a writer that fills such objects
     * (packs) may fill them there and spare the copy. Any store takes any buffer; the others copy direct
     * memory into the heap, so it is no gain there.
     */
    default boolean putsDirectMemory() {
        return false;
    }

    /** The alignment of direct memory {@link #putsDirectMemory()} speaks of: 4 KiB. */
    int DIRECT_ALIGNMENT = 4096;
}
