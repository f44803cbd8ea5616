package io.ferry.cli;

import io.ferry.agent.capture.Capturers;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code ferry run --capture dmtcp|criu --auto-recover} end to end, with the real tools: two
 * ranks of an unmodified C program are checkpointed every second: {@code appender} (4 threads,
 * a 16 MiB heap, a file each appends to) under DMTCP and CRIU, {@code ring} (the two ranks
 * exchange a message over TCP every step) under DMTCP, whose one coordinator for the node's
 * ranks takes both in one checkpoint, {@code pipetree} (a parent and the child it forked,
 * joined by a pipe) under CRIU. Once a generation is established, rank 1
 * (every process of it) is SIGKILLed; every rank rolls back to that generation, is checkpointed
 * again after the restore, and each rank's file ends equal to an uninterrupted run's. Skipped,
 * saying why, where the tool is missing.
 */
class TransparentRunIT {
    /**
     * At least 15 s of work (25 ms a step): a generation is established, rank 1 killed, every rank restored and
     * another generation established within the first 50 to 80 steps (2026-11-27, load average 8 on 2 cores); the
     * steps after that run without their pause ({@link LcgRank#hurry}): they only wait for the end, which
     * took 20-30 s of each DMTCP case, every checkpoint stalling the ranks.
     */
    private static final int STEPS = 600;

    @TempDir
    Path tmp;

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"dmtcp, appender", "dmtcp, ring", "criu, appender", "criu, pipetree"})
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void aKilledRankRollsEveryRankBackAndTheJobEndsAsIfUninterrupted(String method, String program) throws Exception {
        Optional<String> why = Capturers.of(method).unavailable().map(w -> w + "; " + (Files.exists(Path.of("..", "..",
                "shared", "tools", "install-checkpointers.sh")) ? "../shared/tools/install-checkpointers.sh builds it"
                : "this clone has no ../shared beside it, whose tools/install-checkpointers.sh"
                        + " .ci/run uses to build it"));
        why.ifPresent(w -> System.err.println("SKIPPED --capture " + method + " run: " + w));
        assumeTrue(why.isEmpty(), () -> method + " unavailable: " + why.orElse(""));
        Path bin = ScenarioPrograms.compile(tmp, program);
        // ring: the two ranks exchange a message over TCP every step (ports P and P + 1), and each one's file
        // depends on every message it got; both must be taken by one checkpoint and restored together.
        String ports = program.equals("ring") ? " " + TestBed.freePorts(2) : "";
        List<String> reference = ScenarioPrograms.references(bin, tmp, STEPS, program.equals("ring") ? 2 : 1);
        Path home = tmp.resolve("home");
        Process ferry = FerryProcess.builder(List.of(), "run", "--job", method + program, "--ranks", "2", "--interval",
                "1s",
                "--capture", method, "--auto-recover", "--http", "off", "--home", home.toString(), "--store",
                tmp.resolve("store").toString(), "--", "bash", "-c",
                ScenarioPrograms.hurryAssignment(tmp) + "exec " + bin + " " + tmp + "/out.$FERRY_RANK.txt " + STEPS
                        + " 25" + ports).redirectErrorStream(true)
                        .start();
        try {
            Lines lines = new Lines(ferry, method);
            lines.await("an established generation", l -> l.contains(" established on the "));
            // Every process of rank 1 (pipetree's child has its parent's command line): SIGKILL, as a crash.
            List<ProcessHandle> rank1 = ferry.descendants().filter(h -> h.info().arguments()
                    .map(a -> a.length > 0 && a[0].endsWith("/out.1.txt")).orElse(false)).toList();
            assertTrue(!rank1.isEmpty(), "rank 1 (" + bin + " .../out.1.txt) is running");
            rank1.forEach(ProcessHandle::destroyForcibly);
            String rolled = lines.await("the rollback",
                    l -> l.contains("recovering: all ranks roll back to generation"));
            long g = Lines.generationOf(rolled);
            String restored = lines.awaitAfter(lines.lines.indexOf(rolled), "the restore",
                    l -> l.contains("restored generation " + g));
            // Captures go on after the restore (DMTCP's needed the restarted coordinator's port), from the first.
            int from = lines.lines.indexOf(restored);
            String next = lines.awaitAfter(from, "a generation established after the restore",
                    l -> l.contains(" established on the ") && Lines.generationOf(l) > g);
            List<String> seen = List.copyOf(lines.lines); // a sublist of the live list fails once a line is added
            List<String> between = seen.subList(from, seen.indexOf(next));
            assertTrue(between.stream().noneMatch(l -> l.matches(".*generation \\d+ FAILED.*")),
                    "a capture after the restore failed: " + String.join("\n", between));
            LcgRank.hurry(tmp); // the rest of the job only waits for its end
            assertTrue(ferry.waitFor(4, TimeUnit.MINUTES), "ferry run ended");
            assertEquals(0, ferry.exitValue(), String.join("\n", lines.lines));
            for (int r = 0; r < 2; r++) {
                ScenarioPrograms.assertSameFile(reference.get(r % reference.size()), tmp.resolve("out." + r + ".txt"),
                        "rank " + r + "'s file (" + method + " " + program + ")", lines.lines);
            }
        } finally {
            ferry.descendants().forEach(ProcessHandle::destroyForcibly);
            ferry.destroyForcibly();
        }
    }
}
