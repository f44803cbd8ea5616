package io.ferry.cli;

import io.ferry.model.ImageRef;
import io.ferry.staging.GcLease;
import io.ferry.staging.Progress;
import io.ferry.staging.Repository;
import io.ferry.staging.Staging;
import io.ferry.staging.StagingConfig;
import io.ferry.staging.StagingPipeline;
import io.ferry.stores.Store;
import io.ferry.stores.Stores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * `ferry store prune` and `ferry store gc` as a user runs them, and a gc SIGKILLed midway
 * through moving chunks aside: the store still verifies, and the next runs finish the job.
 */
class StoreGcIT {
    private static final int CHUNK = 64 << 10;
    private static final int GARBAGE_CHUNKS = 800;

    @TempDir
    Path tmp;

    /**
     * Objects under a POSIX store directory, as the store counts them (a put's dot-named temporary file is not one).
     */
    private long count(Path dir) throws Exception {
        if (!Files.isDirectory(dir)) {
            return 0;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile).filter(f -> !f.getFileName().toString().startsWith(".")).count();
        }
    }

    @Test
    void aGcKilledMidwayLeavesAStoreThatVerifiesAndTheNextRunsFinish() throws Exception {
        Path root = tmp.resolve("store");
        Path img0 = Files.createDirectories(tmp.resolve("img0"));
        byte[] big = new byte[GARBAGE_CHUNKS * CHUNK];
        new Random(1).nextBytes(big);
        Files.write(img0.resolve("state"), big);
        Path img1 = Files.createDirectories(tmp.resolve("img1"));
        Files.writeString(img1.resolve("state"), "the newest");
        try (Store s = Stores.open(root.toUri(), Map.of());
             StagingPipeline p = Staging.pipeline(s, StagingConfig.from(Map.of("staging.layout", "chunks",
                     "staging.chunk-size", Integer.toString(CHUNK))), Clock.systemUTC())) {
            p.push(img0, new ImageRef("sim", 0, 0), Progress.NONE);
            p.repository().commitSnapshot("sim", 0, 1);
            p.push(img1, new ImageRef("sim", 1, 0), Progress.NONE);
            p.repository().commitSnapshot("sim", 1, 1);
        }
        Path chunks = root.resolve("ferry/v1/chunks");
        Path fossils = root.resolve("ferry/v1/fossils");
        assertEquals(GARBAGE_CHUNKS + 1, count(chunks));

        FerryProcess.Result pruned = FerryProcess.run("store", "prune", root.toString(), "--job", "sim", "--keep-last",
                "1");
        assertEquals(0, pruned.exit(), pruned.err());
        assertTrue(pruned.out().contains("pruned sim: 1 generations [0]; kept [1]"), pruned.out());

        Process gc = FerryProcess.builder(List.of("-Xmx256m"), "store", "gc", root.toString(), "--grace", "0s")
                .redirectErrorStream(true).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (count(fossils) == 0 && gc.isAlive() && System.nanoTime() < deadline) {
            Thread.sleep(2);
        }
        gc.toHandle().destroyForcibly(); // SIGKILL, mid-move
        gc.waitFor();
        long moved = count(fossils);
        assertTrue(moved > 0 && count(chunks) > 1,
                "killed midway: " + moved + " moved aside, " + count(chunks) + " left");

        FerryProcess.Result verify = FerryProcess.run("store", "verify", root.toString());
        assertEquals(0, verify.exit(), verify.out() + verify.err());
        FerryProcess.Result second = FerryProcess.run("store", "gc", root.toString(), "--grace", "0s");
        assertEquals(0, second.exit(), second.err());
        assertTrue(second.out().contains("run again after"), second.out());
        FerryProcess.Result third = FerryProcess.run("store", "gc", root.toString(), "--grace", "0s");
        assertEquals(0, third.exit(), third.err());
        assertEquals(1, count(chunks), "only the newest generation's chunk is left");
        assertEquals(0, count(fossils));
        verify = FerryProcess.run("store", "verify", root.toString());
        assertEquals(0, verify.exit(), verify.out() + verify.err());
        try (Store s = Stores.open(root.toUri(), Map.of())) {
            assertEquals(List.of(1L), new Repository(s, Clock.systemUTC()).listGenerations().stream()
                    .map(Repository.GenerationListing::generation).toList());
        }
    }

    /**
     * The pack layout: generation 0's packs hold a large file generation 1 rewrote and a small one
     * it kept, so gc repacks them (copies the live records, writes their moves) and moves the old
     * packs aside. A gc SIGKILLed midway leaves a store that verifies and a generation 1 that
     * pulls; the next runs finish, and only live packs and the moves they need are left.
     */
    @Test
    void aGcKilledWhileRepackingLeavesAStoreThatVerifiesAndPulls() throws Exception {
        Path root = tmp.resolve("store");
        Path img0 = Files.createDirectories(tmp.resolve("p0"));
        Path img1 = Files.createDirectories(tmp.resolve("p1"));
        byte[] kept = new byte[4 << 20];
        new Random(7).nextBytes(kept);
        byte[] big = new byte[160 << 20];
        new Random(8).nextBytes(big);
        Files.write(img0.resolve("kept"), kept);
        Files.write(img0.resolve("big"), big);
        Files.write(img1.resolve("kept"), kept);
        Files.writeString(img1.resolve("big"), "rewritten");
        Map<String, String> packs = Map.of("staging.layout", "packs", "staging.pack-size", "8MiB");
        int named;
        try (Store s = Stores.open(root.toUri(), Map.of());
             StagingPipeline p = Staging.pipeline(s, StagingConfig.from(packs), Clock.systemUTC())) {
            p.push(img0, new ImageRef("sim", 0, 0), Progress.NONE);
            p.repository().commitSnapshot("sim", 0, 1);
            p.push(img1, new ImageRef("sim", 1, 0), Progress.NONE);
            p.repository().commitSnapshot("sim", 1, 1);
            // The packs generation 1 needs: its own, and those of generation 0 that hold the kept file's blobs
            // (the workers interleave them with the big file's, so one to three packs, as the run goes).
            named = p.repository().readManifest(new ImageRef("sim", 1, 0)).manifest().packs().size();
        }
        Path packDir = root.resolve("ferry/v2/packs");
        Path fossils = root.resolve("ferry/v1/fossils");
        long before = count(packDir);
        assertTrue(before >= 20, "160 MiB of random bytes in packs of 8 MiB: " + before);
        assertEquals(0, FerryProcess.run("store", "prune", root.toString(), "--job", "sim", "--keep-last", "1").exit());

        Process gc = FerryProcess.builder(List.of("-Xmx256m"), "store", "gc", root.toString(), "--grace", "0s")
                .redirectErrorStream(true).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (count(fossils) < 3 && gc.isAlive() && System.nanoTime() < deadline) {
            Thread.sleep(2);
        }
        gc.toHandle().destroyForcibly(); // SIGKILL, mid-move
        gc.waitFor();
        assertTrue(count(fossils) > 0 && count(packDir) > 1, "killed midway: " + count(fossils) + " aside, "
                + count(packDir) + " left");

        FerryProcess.Result verify = FerryProcess.run("store", "verify", root.toString());
        assertEquals(0, verify.exit(), verify.out() + verify.err());
        Path out = tmp.resolve("pulled");
        FerryProcess.Result pull = FerryProcess.run("image", "pull", "--store", root.toString(), "--job", "sim",
                "--generation", "1", "--rank", "0", out.toString());
        assertEquals(0, pull.exit(), pull.out() + pull.err());
        assertEquals(-1, Files.mismatch(img1.resolve("kept"), out.resolve("kept")));
        FerryProcess.Result badPasses = FerryProcess.run("store", "gc", root.toString(), "--passes", "300");
        assertEquals(2, badPasses.exit(), badPasses.err());
        assertTrue(badPasses.err().contains("--passes must be 1 to 256"), badPasses.err());
        StringBuilder runs = new StringBuilder();
        for (int i = 0; i < 3; i++) {
            // The killed run's work is finished in passes over ranges of pack folders, as a store too big for one pass
            // is.
            FerryProcess.Result again = FerryProcess.run("store", "gc", root.toString(), "--grace", "0s", "--passes",
                    "8");
            assertEquals(0, again.exit(), again.err());
            runs.append(again.out());
        }
        try (var left = Files.walk(fossils)) {
            assertEquals(0, count(fossils), runs + "left aside: " + left.toList());
        }
        // Each mostly-garbage pack went; its live records were repacked into at most one new pack each.
        assertTrue(count(packDir) <= named, "generation 1's pack and the repacked kept file: " + count(packDir)
                + " packs where generation 1 named " + named);
        verify = FerryProcess.run("store", "verify", root.toString());
        assertEquals(0, verify.exit(), verify.out() + verify.err());
        Path out2 = tmp.resolve("pulled2");
        pull = FerryProcess.run("image", "pull", "--store", root.toString(), "--job", "sim",
                "--generation", "1", "--rank", "0", out2.toString());
        assertEquals(0, pull.exit(), pull.out() + pull.err());
        assertEquals(-1, Files.mismatch(img1.resolve("kept"), out2.resolve("kept")));
        assertEquals("rewritten", Files.readString(out2.resolve("big")));
    }

    /**
     * Two `ferry store gc` on one store at once: while one holds the store's gc lease (here this
     * process, as another user's gc), a second process refuses, naming the holder and the
     * lease's expiry, and changes nothing; once the first is done, the second runs.
     */
    @Test
    void aSecondGcRefusesWhileOneRunsNamingItsHolder() throws Exception {
        Path root = tmp.resolve("store");
        try (Store s = Stores.open(root.toUri(), Map.of())) {
            GcLease.Holder me = GcLease.Holder.current();
            try (GcLease first = GcLease.acquire(s,
                    new GcLease.Holder("first", me.host(), me.pid()), Duration.ofMinutes(5),
                    Clock.systemUTC())) {
                FerryProcess.Result second = FerryProcess.run("store", "gc", root.toString(), "--grace", "0s");
                assertEquals(1, second.exit(), second.out() + second.err());
                assertTrue(second.err().contains("is running: first@" + me.host()
                        + " (pid " + me.pid() + ")") && second.err().contains("until " + first.expires()),
                        second.err());
                assertEquals(0, count(root.resolve("ferry/v1/fossils")));
            }
            FerryProcess.Result after = FerryProcess.run("store", "gc", root.toString(), "--grace", "0s");
            assertEquals(0, after.exit(), after.err());
        }
    }
}
