package io.ferry.cli;

import io.ferry.coordinator.predict.StoreCurve;
import io.ferry.stores.Store;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Measures a store the way staging uses it: {@code n} concurrent writers putting durable,
 * incompressible 4 MiB objects ({@code perWriter} bytes each), for each {@code n}; and, for a
 * {@code file:} store, a plain fsynced sequential write into its file system (the hardware's
 * rate). Everything written is deleted afterwards, also on failure.
 */
final class StoreProbe {
    static final int OBJECT = 4 << 20;

    private StoreProbe() {}

    static StoreCurve curve(Store store, List<Integer> writers, long perWriter, PrintStream progress)
            throws IOException, InterruptedException {
        byte[] data = new byte[OBJECT];
        new SplittableRandom(7).nextBytes(data);
        String prefix = "ferry-probe/" + Long.toHexString(System.nanoTime()) + "/";
        long objects = Math.max(1, perWriter / OBJECT);
        List<StoreCurve.Point> points = new ArrayList<>();
        List<String> written = Collections.synchronizedList(new ArrayList<>());
        ExecutorService pool = Executors.newFixedThreadPool(writers.stream().mapToInt(Integer::intValue).max()
                .orElse(1));
        try {
            for (int n : writers) {
                long t0 = System.nanoTime();
                List<Future<?>> running = new ArrayList<>();
                for (int w = 0; w < n; w++) {
                    int writer = w;
                    running.add(pool.submit(() -> {
                        for (long i = 0; i < objects; i++) {
                            String key = prefix + "n" + n + "-w" + writer + "-" + i;
                            written.add(key);
                            store.put(key, ByteBuffer.wrap(data));
                        }
                        return null;
                    }));
                }
                for (Future<?> f : running) {
                    try {
                        f.get();
                    } catch (ExecutionException e) {
                        throw new IOException("store probe with " + n + " writers failed: " + e.getCause().getMessage(),
                                e.getCause());
                    }
                }
                double rate = (double) n * objects * OBJECT / ((System.nanoTime() - t0) / 1e9);
                points.add(new StoreCurve.Point(n, rate));
                progress.printf(Locale.ROOT, "  store probe: %d writer%s, %.0f MB/s together%n", n, n == 1 ? "" : "s",
                        rate / 1e6);
            }
        } finally {
            pool.shutdownNow();
            for (String key : written) {
                try {
                    store.delete(key);
                } catch (IOException | RuntimeException e) {
                    progress.println("  store probe: could not delete " + key + ": " + e.getMessage());
                }
            }
            removeEmptyDirectories(store, prefix);
        }
        return new StoreCurve(points);
    }

    /** A file: store keeps the directories of deleted keys: the probe's own ones go too, if empty. */
    private static void removeEmptyDirectories(Store store, String prefix) {
        if (!"file".equals(store.uri().getScheme())) {
            return;
        }
        Path dir = Path.of(store.uri()).resolve(prefix);
        for (Path d : new Path[]{dir, dir.getParent()}) {
            try {
                Files.deleteIfExists(d);
            } catch (IOException e) {
                return; // not empty (another probe runs) or not ours to remove
            }
        }
    }

    /** Sequential fsynced write of {@code bytes} into {@code dir}: MB/s the disk takes without Ferry. */
    static double rawDisk(Path dir, long bytes) throws IOException {
        byte[] data = new byte[OBJECT];
        new SplittableRandom(11).nextBytes(data);
        Path f = Files.createTempFile(dir, ".ferry-probe-", ".raw");
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE)) {
            long t0 = System.nanoTime();
            for (long done = 0; done < bytes; done += OBJECT) {
                ByteBuffer b = ByteBuffer.wrap(data);
                while (b.hasRemaining()) {
                    ch.write(b);
                }
            }
            ch.force(true);
            return bytes / ((System.nanoTime() - t0) / 1e9);
        } finally {
            Files.deleteIfExists(f);
        }
    }
}
