package io.ferry.agent;

import io.ferry.model.ImageRef;
import io.ferry.staging.LocalCache;
import io.ferry.staging.Progress;
import io.ferry.staging.Staging;
import io.ferry.staging.StagingConfig;
import io.ferry.staging.StagingPipeline;
import io.ferry.stores.Store;
import io.ferry.stores.Stores;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A node's cached copy that its disk cannot read (every read EIO, or every open EACCES) is a
 * fault of the copy, not of the image: the restore goes on to the store, and the generation is
 * not set aside. The faults come from the kernel, through a FUSE file system mounted over the
 * cached image ({@code faults/faultfs.py}): the agent reads it as it would a failing disk.
 * Needs root, {@code /dev/fuse}, {@code fusermount} and fusepy for {@code /usr/bin/python3}
 * (Debian {@code python3-fusepy fuse}, installed by {@code .ci/run}); skipped, saying so, without them.
 */
class CachedCopyDiskFaultIT {
    @TempDir
    Path tmp;

    @ParameterizedTest(name = "cached copy fails with {0}")
    @ValueSource(strings = {"EIO", "EACCES"})
    void aCachedCopyTheDiskCannotReadFallsThroughToTheStore(String fault) throws Exception {
        assumeFuse();
        LocalCache cache = Staging.localCache(tmp.resolve("cache"));
        ImageRef ref = new ImageRef("job", 4, 0);
        Path image = cache.imageDir(ref);
        Files.createDirectories(image.resolve("sub"));
        byte[] state = new byte[5 << 20];
        new Random(3).nextBytes(state);
        Files.write(image.resolve("sub/state.bin"), state);
        Files.writeString(image.resolve("small"), "42");
        try (Store store = Stores.open(tmp.resolve("store").toUri(), Map.of());
             StagingPipeline pipeline = Staging.pipeline(store, StagingConfig.defaults(), Clock.systemUTC())) {
            cache.markStaged(ref, pipeline.push(image, ref, Progress.NONE));
            pipeline.repository().commitSnapshot("job", 4, 1);
            assertEquals("local", RestartSource.tier(pipeline, cache, ref, List.of()), "readable, the copy is used");

            Path backing = tmp.resolve("backing");
            Files.move(image, backing);
            Files.createDirectories(image);
            Process fs = new ProcessBuilder("/usr/bin/python3", faultfs().toString(), backing.toString(),
                    image.toString(), fault)
                    .redirectErrorStream(true).redirectOutput(tmp.resolve("faultfs.log").toFile()).start();
            try {
                awaitMounted(image, fs);
                assertEquals(state.length, Files.size(image.resolve("sub/state.bin")), "the layout reads as before");
                IOException seen = assertThrows(IOException.class,
                        () -> Files.readAllBytes(image.resolve("sub/state.bin")));
                assertTrue(String.valueOf(seen.getMessage()).contains(fault.equals("EIO") ? "Input/output error" : "")
                        && (fault.equals("EIO") || seen instanceof AccessDeniedException),
                        "the fault is real: " + seen);

                Path target = tmp.resolve("restart");
                assertEquals("remote", RestartSource.materialise(pipeline, cache, ref, target));
                assertArrayEquals(state, Files.readAllBytes(target.resolve("sub/state.bin")));
                assertEquals("42", Files.readString(target.resolve("small")));
                assertTrue(RestartSource.plan(pipeline, cache, ref, List.of()).startsWith("remote"),
                        "a dry run plans the store too");
            } finally {
                new ProcessBuilder("fusermount", "-u", "-z", image.toString()).inheritIO().start()
                        .waitFor(10, TimeUnit.SECONDS);
                fs.destroy();
                if (!fs.waitFor(10, TimeUnit.SECONDS)) {
                    fs.destroyForcibly();
                }
            }
        }
    }

    private static void assumeFuse() {
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root to mount FUSE file systems");
        assumeTrue(Files.exists(Path.of("/dev/fuse")), "needs /dev/fuse");
        assumeTrue(onPath("fusermount"), "needs fusermount (Debian fuse)");
        boolean fusepy;
        try {
            fusepy = new ProcessBuilder("/usr/bin/python3", "-c", "import fusepy").start().waitFor() == 0;
        } catch (IOException | InterruptedException e) {
            fusepy = false;
        }
        assumeTrue(fusepy, "needs fusepy for /usr/bin/python3 (Debian python3-fusepy)");
    }

    private static boolean onPath(String tool) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, tool))) {
                return true;
            }
        }
        return false;
    }

    private Path faultfs() throws IOException {
        Path script = tmp.resolve("faultfs.py");
        try (var in = CachedCopyDiskFaultIT.class.getResourceAsStream("/faults/faultfs.py")) {
            Files.copy(in, script);
        }
        return script;
    }

    private void awaitMounted(Path mountpoint, Process fs) throws IOException, InterruptedException {
        String where = " " + mountpoint.toRealPath() + " ";
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < until) {
            if (Files.readString(Path.of("/proc/self/mountinfo")).contains(where)) {
                return;
            }
            if (!fs.isAlive()) {
                throw new AssertionError("faultfs exited " + fs.exitValue() + ": "
                        + Files.readString(tmp.resolve("faultfs.log")));
            }
            Thread.sleep(50);
        }
        throw new AssertionError("faultfs did not mount " + mountpoint + " within 20 s");
    }
}
