package io.ferry.stores;

import io.ferry.stores.posix.PosixStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The resilience layer around a real POSIX store. Retries and the circuit breaker need a store
 * that fails and comes back: they are tested against s3proxy, stopped and started, in
 * stores-s3 ({@code S3OutageTest}).
 */
class ResilientStoreTest {
    @TempDir
    Path dir;

    private static final Resilience FAST = new Resilience(3, Duration.ofMillis(10), Duration.ofMillis(40), 0.5,
            50f, 4, Duration.ofMillis(300), 10, 64L << 20);

    @Test
    void badSettingsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> new Resilience(0, Duration.ofMillis(10),
                Duration.ofMillis(10), 0, 50f, 4, Duration.ofSeconds(1), 1, 1));
        assertThrows(IllegalArgumentException.class, () -> new Resilience(1, Duration.ofMillis(10),
                Duration.ofMillis(5), 0, 50f, 4, Duration.ofSeconds(1), 1, 1));
        assertThrows(IllegalArgumentException.class, () -> new Resilience(1, Duration.ofMillis(10),
                Duration.ofMillis(10), 1.5, 50f, 4, Duration.ofSeconds(1), 1, 1));
    }

    @Test
    void notFoundIsAnAnswerNeitherRetriedNorAFailure() throws Exception {
        try (ResilientStore s = new ResilientStore(PosixStore.open(dir, Map.of()), FAST)) {
            assertThrows(ObjectNotFoundException.class, () -> s.get("nope"));
            assertEquals(new StoreHealth("CLOSED", 1, 0, 0, 0), s.health());
        }
    }

    @Test
    void bulkheadBoundsObjectsInTransfer() throws Exception {
        AtomicInteger now = new AtomicInteger();
        AtomicInteger peak = new AtomicInteger();
        Store real = PosixStore.open(dir, Map.of());
        // Observes the real store's concurrency; every call still goes to the real store.
        Store observed = new ObservedStore(real, now, peak);
        Resilience two = new Resilience(1, Duration.ofMillis(10), Duration.ofMillis(10), 0, 50f, 4,
                Duration.ofSeconds(1), 2, 64L << 20);
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try (ResilientStore s = new ResilientStore(observed, two)) {
            List<Future<?>> fs = new ArrayList<>();
            for (int i = 0; i < 32; i++) {
                int n = i;
                fs.add(pool.submit(() -> {
                    s.put("k" + n, ByteBuffer.wrap(new byte[1 << 20]));
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
            assertEquals(32, s.list("").size());
        } finally {
            pool.shutdown();
        }
        assertTrue(peak.get() <= 2, "at most 2 objects in transfer, saw " + peak.get());
        assertTrue(peak.get() >= 1);
    }

    /** Counts concurrent puts into a real store. */
    private record ObservedStore(Store inner, AtomicInteger now, AtomicInteger peak) implements Store {
        @Override
        public URI uri() {
            return inner.uri();
        }

        @Override
        public void put(String key, ByteBuffer data) throws StoreException {
            peak.accumulateAndGet(now.incrementAndGet(), Math::max);
            try {
                inner.put(key, data);
            } finally {
                now.decrementAndGet();
            }
        }

        @Override
        public byte[] get(String key) throws StoreException {
            return inner.get(key);
        }

        @Override
        public int read(String key, byte[] dst) throws StoreException {
            return inner.read(key, dst);
        }

        @Override
        public void readRange(String key, long offset, byte[] dst, int dstOff, int len) throws StoreException {
            inner.readRange(key, offset, dst, dstOff, len);
        }

        @Override
        public long size(String key) throws StoreException {
            return inner.size(key);
        }

        @Override
        public boolean exists(String key) throws StoreException {
            return inner.exists(key);
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
        public void close() throws IOException {
            inner.close();
        }
    }
}
