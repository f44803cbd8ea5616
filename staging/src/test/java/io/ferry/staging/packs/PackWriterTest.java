package io.ferry.staging.packs;

import io.ferry.model.ChunkId;
import io.ferry.stores.Store;
import io.ferry.stores.StoreException;
import io.ferry.stores.Stores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link PackWriter} on a real POSIX store: several packs written at once, within the bound. */
class PackWriterTest {
    @TempDir
    Path tmp;

    /**
     * A real POSIX store that notes how many puts run at once. Its first put waits (10 s at
     * most) for a second one to begin, so a writer that writes one pack at a time shows it.
     */
    private static final class Watched implements Store {
        final Store real;
        final AtomicInteger now = new AtomicInteger();
        final AtomicInteger most = new AtomicInteger();
        final CountDownLatch second = new CountDownLatch(1);
        final AtomicInteger puts = new AtomicInteger();

        Watched(Store real) {
            this.real = real;
        }

        @Override
        public void put(String key, ByteBuffer data) throws StoreException {
            int at = now.incrementAndGet();
            most.accumulateAndGet(at, Math::max);
            if (at >= 2) {
                second.countDown();
            }
            try {
                if (puts.getAndIncrement() == 0) {
                    second.await(10, TimeUnit.SECONDS);
                }
                real.put(key, data);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            } finally {
                now.decrementAndGet();
            }
        }

        @Override public URI uri() { return real.uri(); }
        @Override public byte[] get(String key) throws StoreException { return real.get(key); }
        @Override public int read(String key, byte[] dst) throws StoreException { return real.read(key, dst); }
        @Override public void readRange(String key, long offset, byte[] dst, int dstOff, int len)
                throws StoreException {
            real.readRange(key, offset, dst, dstOff, len);
        }
        @Override public boolean exists(String key) throws StoreException { return real.exists(key); }
        @Override public long size(String key) throws StoreException { return real.size(key); }
        @Override public List<String> list(String prefix) throws StoreException { return real.list(prefix); }
        @Override public void delete(String key) throws StoreException { real.delete(key); }
        @Override public void close() throws IOException { real.close(); }
    }

    private record Appended(byte[] record, PackWriter.Placed at) {}

    @Test
    void packsAreWrittenSeveralAtOnceAndEveryRecordLandsWhereItWasPlaced() throws Exception {
        try (Watched store = new Watched(Stores.open(tmp.resolve("store").toUri(), Map.of()))) {
            PackWriter writer = new PackWriter(store, 1 << 20, 4);
            List<Appended> all = appendConcurrently(writer, 6, 30);
            writer.finish();
            assertTrue(store.most.get() >= 2, "a second pack was written while the first one was: " + store.most.get());
            assertTrue(store.most.get() <= 4,
                    "at most four packs exist, filling or being written: " + store.most.get());
            assertEquals(writer.packs(), store.puts.get());
            assertTrue(writer.packs() >= 4, "180 records of 100 KiB fill several 1 MiB packs: " + writer.packs());
            for (Appended a : all) {
                byte[] back = new byte[a.record().length];
                store.readRange(PackKeys.packKey(a.at().pack()), a.at().offset(), back, 0, back.length);
                assertArrayEquals(a.record(), back, "record at " + a.at());
            }
        }
    }

    @Test
    void aWriterHoldsAtLeastTwoPacks() {
        assertThrows(IllegalArgumentException.class, () -> new PackWriter(null, 1 << 20, 1));
    }

    private static List<Appended> appendConcurrently(PackWriter writer, int threads, int each) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<List<Appended>>> futures = new ArrayList<>();
            Map<ChunkId, Boolean> ids = new ConcurrentHashMap<>();
            for (int t = 0; t < threads; t++) {
                int seed = t;
                futures.add(pool.submit(() -> {
                    Random r = new Random(seed);
                    List<Appended> out = new ArrayList<>();
                    for (int i = 0; i < each; i++) {
                        byte[] record = new byte[100 << 10];
                        r.nextBytes(record);
                        byte[] name = new byte[ChunkId.LENGTH];
                        r.nextBytes(name);
                        ChunkId id = ChunkId.of(name);
                        ids.put(id, true);
                        out.add(new Appended(Arrays.copyOf(record, record.length),
                                writer.append(id, record, 0, record.length)));
                    }
                    return out;
                }));
            }
            List<Appended> all = new ArrayList<>();
            for (Future<List<Appended>> f : futures) {
                all.addAll(f.get(60, TimeUnit.SECONDS));
            }
            return all;
        } finally {
            pool.shutdownNow();
        }
    }
}
