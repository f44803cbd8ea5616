package io.ferry.cli;

import io.ferry.staging.Staging;
import io.ferry.staging.StagingConfig;
import io.ferry.staging.StagingPipeline;
import io.ferry.stores.Store;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import java.util.Random;

/**
 * The small images {@link RepositoryOnEveryStoreIT} pushes to every store, and the chunk-layout
 * pipeline it pushes them with: chunks of {@link #CHUNK} bytes, so a few hundred KiB make several
 * chunks, a partial last one and a run of identical (zero) chunks.
 */
final class ChunkedImages {
    /** The chunk size of {@link #pipeline}. */
    static final int CHUNK = 64 << 10;

    private ChunkedImages() {
    }

    /** A chunk-layout pipeline over {@code s}, chunks of {@link #CHUNK} bytes. */
    static StagingPipeline pipeline(Store s) {
        return Staging.pipeline(s,
                StagingConfig.from(Map.of("staging.layout", "chunks", "staging.chunk-size", Integer.toString(CHUNK))),
                Clock.systemUTC());
    }

    /** An image in {@code dir}: 5 chunks and 123 bytes of random data from {@code seed}, and 3 chunks of zeros. */
    static Path image(Path dir, int seed) throws Exception {
        Files.createDirectories(dir);
        byte[] data = new byte[5 * CHUNK + 123];
        new Random(seed).nextBytes(data);
        Files.write(dir.resolve("state.bin"), data);
        Files.write(dir.resolve("zeros.bin"), new byte[3 * CHUNK]);
        return dir;
    }
}
