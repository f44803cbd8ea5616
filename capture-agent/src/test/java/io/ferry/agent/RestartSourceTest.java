package io.ferry.agent;

import io.ferry.model.ImageRef;
import io.ferry.staging.LocalCache;
import io.ferry.staging.Progress;
import io.ferry.staging.Staging;
import io.ferry.staging.StagingConfig;
import io.ferry.staging.StagingPipeline;
import io.ferry.stores.Store;
import io.ferry.stores.Stores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

class RestartSourceTest {
    @TempDir
    Path tmp;

    @Test
    void restoresFromTheCacheWhenEveryChunkVerifiesAndFromTheStoreWhenOneByteDiffers() throws Exception {
        LocalCache cache = Staging.localCache(tmp.resolve("cache"));
        ImageRef ref = new ImageRef("job", 1, 0);
        Path image = cache.imageDir(ref);
        Files.createDirectories(image.resolve("sub"));
        byte[] big = new byte[9 << 20]; // three chunks, the last one short
        new Random(7).nextBytes(big);
        java.util.Arrays.fill(big, 4 << 20, 8 << 20, (byte) 0); // an all-zero chunk
        Files.write(image.resolve("sub/state.bin"), big);
        Files.writeString(image.resolve("small"), "42");
        Files.write(image.resolve("empty"), new byte[0]);
        Files.setPosixFilePermissions(image.resolve("small"), PosixFilePermissions.fromString("rwxr-x---"));
        Files.createSymbolicLink(image.resolve("link"), Path.of("small"));
        try (Store store = Stores.open(tmp.resolve("store").toUri(), Map.of());
             StagingPipeline pipeline = Staging.pipeline(store, StagingConfig.defaults(), Clock.systemUTC())) {
            pipeline.push(image, ref, Progress.NONE);

            Path target = tmp.resolve("restart");
            assertEquals("local", RestartSource.materialise(pipeline, cache, ref, target));
            assertArrayEquals(big, Files.readAllBytes(target.resolve("sub/state.bin")));
            assertEquals("42", Files.readString(target.resolve("small")));
            assertEquals(0, Files.size(target.resolve("empty")));
            assertEquals("rwxr-x---", PosixFilePermissions.toString(Files.getPosixFilePermissions(target.resolve("small"))));
            assertEquals(Path.of("small"), Files.readSymbolicLink(target.resolve("link")));

            try (RandomAccessFile f = new RandomAccessFile(image.resolve("sub/state.bin").toFile(), "rw")) {
                f.seek((4 << 20) + 12345); // inside the zero chunk
                f.write(1);
            }
            assertEquals("remote", RestartSource.materialise(pipeline, cache, ref, target));
            assertArrayEquals(big, Files.readAllBytes(target.resolve("sub/state.bin")));
        }
    }
}
