package io.ferry.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A push killed with SIGKILL between chunk writes and its manifest: no image and no snapshot
 * become visible, nothing in the store is corrupt, and a second push completes, reusing the
 * chunks that were already durable.
 */
class CrashIT {
    @TempDir
    Path tmp;

    private static long chunkCount(Path store) throws Exception {
        Path chunks = store.resolve("ferry/v1/chunks");
        if (!Files.isDirectory(chunks)) {
            return 0;
        }
        while (true) {
            try (Stream<Path> s = Files.walk(chunks)) {
                return s.filter(p -> Files.isRegularFile(p) && !p.getFileName().toString().startsWith(".")).count();
            } catch (UncheckedIOException e) {
                if (!(e.getCause() instanceof NoSuchFileException)) {
                    throw e;
                }
                // The push renamed a temporary file between the walk's listing and its look at it: count again.
            }
        }
    }

    @Test
    void killedPushLeavesNoVisibleImageAndNothingCorrupt() throws Exception {
        Path img = tmp.resolve("image");
        // 128 MiB: 512 chunks, the push killed at its 20th (a 600 MiB image cost the 2-core suite a minute of CPU
        // re-pushing and verifying what these asserts do not need).
        SyntheticImage.write(img, 128L << 20, 3, 0);
        Path store = tmp.resolve("store");
        String[] push = {"image", "push", img.toString(), "--store", store.toString(), "--job", "crash",
                "--generation", "9", "--rank", "0", "--set", "staging.layout=chunks", "--set",
                "staging.chunk-size=256KiB", "--set", "staging.workers=1"};
        Process p = FerryProcess.builder(List.of(), push).redirectErrorStream(true)
                .redirectOutput(tmp.resolve("push.log").toFile()).start();
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (chunkCount(store) < 20 && p.isAlive() && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertTrue(p.isAlive(),
                "push finished before it could be killed: " + Files.readString(tmp.resolve("push.log")));
        p.destroyForcibly(); // SIGKILL: no shutdown hooks, no cleanup
        p.waitFor();
        long written = chunkCount(store);
        assertTrue(written >= 20, "chunks written before the kill: " + written);

        assertFalse(Files.exists(store.resolve("ferry/v1/jobs/crash/9/0.manifest")), "no manifest after a crash");
        assertFalse(Files.exists(store.resolve("ferry/v1/jobs/crash/9/SNAPSHOT")), "no snapshot after a crash");
        FerryProcess.Result ls = FerryProcess.run("store", "ls", store.toString());
        assertTrue(ls.out().contains("0 generations"), ls.out());
        FerryProcess.Result verify = FerryProcess.run("store", "verify", store.toString());
        assertEquals(0, verify.exit(), verify.out());
        FerryProcess.Result pull = FerryProcess.run("image", "pull", "--store", store.toString(), "--job", "crash",
                "--generation", "9", "--rank", "0", tmp.resolve("out").toString());
        assertEquals(1, pull.exit());
        assertTrue(pull.err().contains("no image crash/9/0"), pull.err());

        FerryProcess.Result again = FerryProcess.run(push);
        assertEquals(0, again.exit(), again.err());
        long reused = Long.parseLong(again.out().replaceAll("(?s).*, (\\d+) already stored.*", "$1"));
        assertTrue(reused >= written - 2, "a re-push reuses the durable chunks: " + again.out());
        assertEquals(0, FerryProcess.run("store", "verify", store.toString()).exit());
    }
}
