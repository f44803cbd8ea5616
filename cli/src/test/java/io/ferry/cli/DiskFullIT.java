package io.ferry.cli;

import io.ferry.staging.Progress;
import io.ferry.staging.Staging;
import io.ferry.staging.StagingConfig;
import io.ferry.staging.StagingPipeline;
import io.ferry.staging.VerifyReport;
import io.ferry.stores.Store;
import io.ferry.stores.Stores;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The node cache's disk fills up during a run (issue 13): a real 4 MiB tmpfs mounted as the
 * one-node run's cache. The rank's first checkpoints are small; from step 100 on it tries to
 * write 8 MiB, which cannot fit. Each of those captures fails and says the cache is full, the
 * rank runs on, the job finishes with the result of an uninterrupted run, and the generation
 * established before the disk filled stays on the store, complete and verified.
 */
class DiskFullIT {
    private static final int STEPS = 300;
    @TempDir
    Path tmp;
    private Path mounted;

    @AfterEach
    void unmount() throws Exception {
        if (mounted != null) {
            new ProcessBuilder("umount", "-l", mounted.toString()).inheritIO().start().waitFor();
        }
    }

    @Test
    void aFullCacheFailsTheCaptureCleanlyAndTheJobRunsOn() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "mounting a tmpfs needs root");
        Path home = tmp.resolve("home");
        Path cache = Files.createDirectories(home.resolve("cache"));
        Process mount = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", cache.toString())
                .redirectErrorStream(true).start();
        String why = new String(mount.getInputStream().readAllBytes());
        assumeTrue(mount.waitFor() == 0, "cannot mount a tmpfs here: " + why);
        mounted = cache;

        Path results = Files.createDirectories(tmp.resolve("results"));
        Path script = tmp.resolve("rank.sh");
        Files.writeString(script, String.join("\n",
                "#!/usr/bin/env bash",
                // A careful rank: DONE only once its files are written; 16 KiB of state, then 8 MiB from step 100 on.
                "trap 'g=$(cat \"$FERRY_CKPT_DIR/REQUEST\"); d=\"$FERRY_CKPT_DIR/$g\"; size=$(( step <"
                        + " 100 ? 16384 : 8388608 ));"
                        + " { echo \"$x $step\" > \"$d/state\" && head -c $size /dev/urandom > \"$d/blob\"; }"
                        + " 2>/dev/null && : > \"$d/DONE\"' USR2",
                "results=$1; x=$((FERRY_RANK + 1)); step=0",
                "if [ -n \"$FERRY_RESTART_DIR\" ]; then read -r x step < \"$FERRY_RESTART_DIR/state\"; fi",
                "while (( step < " + STEPS + " )); do",
                "  (( x = (x * 1103515245 + 12345) % 2147483648, step++ ))",
                "  sleep 0.02",
                "done",
                "echo \"$x\" > \"$results/rank-$FERRY_RANK\"", ""));
        script.toFile().setExecutable(true);
        Path store = tmp.resolve("store");
        Process run = FerryProcess.builder(List.of("-Xmx768m"), "run", "--job", "full", "--ranks", "1", "--home",
                home.toString(),
                "--http", "off", "--interval", "1s", "--capture-timeout", "3s", "--auto-recover", "--store",
                store.toString(),
                "--", script.toString(), results.toString()).redirectErrorStream(true).start();
        Lines out = new Lines(run, "run");
        assertTrue(run.waitFor(3, TimeUnit.MINUTES), "ferry run did not finish: " + out.lines);
        out.awaitEnd(); // its last lines
        assertEquals(0, run.exitValue(), String.join("\n", out.lines));
        assertEquals(Long.toString(LcgRank.uninterrupted(0, STEPS)), Files.readString(results.resolve("rank-0")).trim(),
                "the rank ran on and ended as an uninterrupted run does");

        String failed = out.lines.stream().filter(l -> l.contains("FAILED") && l.contains("generation")).findFirst()
                .orElseThrow(() -> new AssertionError("no capture failed: " + out.lines));
        assertTrue(failed.contains("the node cache's file system") && failed.contains("is full"), failed);
        long firstFailed = Lines.generationOf(failed);
        long established = out.lines.stream().filter(l -> l.matches(".*generation \\d+ established.*"))
                .mapToLong(Lines::generationOf).filter(g -> g < firstFailed).max()
                .orElseThrow(() -> new AssertionError("nothing established before the disk filled: " + out.lines));
        assertTrue(Files.isRegularFile(store.resolve("ferry/v1/jobs/full/" + established + "/SNAPSHOT")),
                "generation " + established + " stays established");
        try (Store s = Stores.open(store.toUri(), Map.of());
             StagingPipeline p = Staging.pipeline(s, StagingConfig.defaults(), Clock.systemUTC())) {
            VerifyReport v = p.verify(Progress.NONE);
            assertTrue(v.ok(), v.problems().toString());
        }
        FerryProcess.Result list = FerryProcess.run("list", "full", "--home", home.toString());
        assertTrue(list.out().contains("is full"), "the job's history says why: " + list.out() + list.err());
    }
}
