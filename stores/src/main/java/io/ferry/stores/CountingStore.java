package io.ferry.stores;

import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;

/**
 * A {@link Store} that counts the objects and bytes written and read through it
 * ({@link #stats()}) and otherwise forwards every call, default methods included, to the store
 * it wraps. A call that fails counts nothing. Outermost over a {@link ResilientStore}, it
 * counts each object once however many tries it took. No metrics library here: a node agent
 * reads {@link #stats()} into its meters. Thread-safe, as the store it wraps.
 */
public final class CountingStore implements Store {
    private final Store inner;
    private final LongAdder objectsWritten = new LongAdder();
    private final LongAdder bytesWritten = new LongAdder();
    private final LongAdder objectsRead = new LongAdder();
    private final LongAdder bytesRead = new LongAdder();

    public CountingStore(Store inner) {
        this.inner = Objects.requireNonNull(inner, "inner");
    }

    /** The counts so far; each is read on its own, so a snapshot taken during a put may be one object off. */
    public StoreStats stats() {
        return new StoreStats(objectsWritten.sum(), bytesWritten.sum(), objectsRead.sum(), bytesRead.sum());
    }

    public Store inner() {
        return inner;
    }

    @Override
    public URI uri() {
        return inner.uri();
    }

    @Override
    public void put(String key, ByteBuffer data) throws StoreException {
        int size = data.remaining(); // the store may consume the buffer
        inner.put(key, data);
        objectsWritten.increment();
        bytesWritten.add(size);
    }

    @Override
    public byte[] get(String key) throws StoreException {
        return counted(inner.get(key));
    }

    @Override
    public int read(String key, byte[] dst) throws StoreException {
        int len = inner.read(key, dst);
        read(Math.min(len, dst.length));
        return len;
    }

    @Override
    public void readRange(String key, long offset, byte[] dst, int dstOff, int len) throws StoreException {
        inner.readRange(key, offset, dst, dstOff, len);
        read(len);
    }

    @Override
    public byte[] getAtMost(String key, int maxBytes) throws StoreException {
        return counted(inner.getAtMost(key, maxBytes));
    }

    @Override
    public boolean exists(String key) throws StoreException {
        return inner.exists(key);
    }

    @Override
    public long size(String key) throws StoreException {
        return inner.size(key);
    }

    @Override
    public List<String> list(String prefix) throws StoreException {
        return inner.list(prefix);
    }

    @Override
    public void delete(String key) throws StoreException {
        inner.delete(key);
    }

    @Override
    public int deleteAbandoned(Duration olderThan, boolean dryRun) throws StoreException {
        return inner.deleteAbandoned(olderThan, dryRun);
    }

    @Override
    public boolean putsDirectMemory() {
        return inner.putsDirectMemory();
    }

    @Override
    public StoreHealth health() {
        return inner.health();
    }

    @Override
    public void close() throws IOException {
        inner.close();
    }

    @Override
    public String toString() {
        return inner.toString();
    }

    private byte[] counted(byte[] data) {
        read(data.length);
        return data;
    }

    private void read(long bytes) {
        objectsRead.increment();
        bytesRead.add(bytes);
    }
}
