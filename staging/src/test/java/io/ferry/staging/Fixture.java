package io.ferry.staging;

import io.ferry.stores.Store;
import io.ferry.stores.Stores;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import java.util.Random;

/** A real file: store and a pipeline with small chunks (the chunk layout, unless told), so boundaries are cheap to test. */
final class Fixture implements AutoCloseable {
    static final int CHUNK = 64 * 1024;
    final Path root;
    final Store store;
    final StagingPipeline pipeline;

    Fixture(Path root) throws IOException {
        this(root, Map.of("staging.layout", "chunks", "staging.chunk-size", Integer.toString(CHUNK), "staging.workers", "3"));
    }

    Fixture(Path root, Map<String, String> settings) throws IOException {
        this.root = root;
        this.store = Stores.open(root.resolve("store").toUri(), Map.of());
        this.pipeline = Staging.pipeline(store, StagingConfig.from(settings), Clock.systemUTC());
    }

    Path storeDir() {
        return root.resolve("store");
    }

    static byte[] randomBytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    static void write(Path file, byte[] data) throws IOException {
        Files.createDirectories(file.getParent());
        Files.write(file, data);
    }

    @Override
    public void close() throws IOException {
        pipeline.close();
        store.close();
    }
}
