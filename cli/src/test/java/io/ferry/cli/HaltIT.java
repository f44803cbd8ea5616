package io.ferry.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Halt before a deadline, with real processes: a job of two bash ranks (no interval
 * checkpoints) is halted by `ferry halt --seconds 20`: its final checkpoint is established
 * before the deadline and `ferry run` exits 0. The same `ferry run` again resumes from that
 * checkpoint and is halted by SIGTERM (what Slurm sends before the time limit). The third run
 * resumes and finishes, with the result of an uninterrupted run.
 */
class HaltIT {
    private static final int RANKS = 2;
    /**
     * About 30 s of work (a step is a 20 ms sleep): the two halted runs use some 5 to 15 s of it, the
     * third run the rest. 2500 steps made the third run a minute of waiting for nothing.
     */
    private static final int STEPS = 1200;

    @TempDir
    Path tmp;

    @Test
    void ferryHaltAndSigtermEachTakeAFinalCheckpointBeforeTheDeadlineAndTheSameRunResumesFromIt() throws Exception {
        Path results = Files.createDirectories(tmp.resolve("results"));
        Path rank = LcgRank.script(tmp, STEPS);
        String home = tmp.resolve("home").toString();
        // SIGTERM's grace: the final checkpoint is asked for as late as the forecast allows (deadline - 1.5 x forecast
        // - 5 s), so every second of grace beyond that lead is a second of waiting; 10 s leaves the same lead as 20 s.
        List<String> run = List.of("run", "--job", "halt", "--ranks", Integer.toString(RANKS), "--interval", "0",
                "--halt-grace", "10s", "--home", home, "--http", "off", "--", rank.toString(), results.toString());

        // 1. ferry halt, with 20 s to go.
        Process first = FerryProcess.builder(List.of("-Xmx384m"), run.toArray(String[]::new)).redirectErrorStream(true)
                .start();
        Lines out1 = new Lines(first, "run1");
        awaitRanksRunning(results); // their handlers are set: each writes its pid file after its trap
        FerryProcess.Result halt = FerryProcess.run("halt", "halt", "--seconds", "20s", "--home", home);
        assertEquals(0, halt.exit(), halt.err());
        assertTrue(first.waitFor(60, TimeUnit.SECONDS), "ferry run did not stop: " + out1.lines);
        assertEquals(0, first.exitValue(), String.join("\n", out1.lines));
        long g1 = haltedGeneration(out1.await("the halt", l -> l.contains("halted: generation")));
        assertFalse(Files.exists(results.resolve("rank-0")), "halted before the end of its work");

        // 2. The same ferry run resumes from it; SIGTERM halts it again.
        deletePids(results);
        Process second = FerryProcess.builder(List.of("-Xmx384m"), run.toArray(String[]::new)).redirectErrorStream(true)
                .start();
        Lines out2 = new Lines(second, "run2");
        out2.await("the resume from generation " + g1, l -> l.contains("roll back to generation " + g1));
        awaitRanksRunning(results); // restored, and their handlers set
        // SIGTERM with kill, not Process.destroy(): destroy also closes this side of the child's output pipe.
        new ProcessBuilder("kill", "-TERM", Long.toString(second.pid())).inheritIO().start().waitFor();
        assertTrue(second.waitFor(60, TimeUnit.SECONDS), "ferry run did not stop: " + out2.lines);
        assertEquals(0, second.exitValue(), String.join("\n", out2.lines));
        out2.await("the SIGTERM handler", l -> l.contains("SIGTERM: halting the job"));
        long g2 = haltedGeneration(out2.await("the halt", l -> l.contains("halted: generation")));
        assertTrue(g2 > g1, g2 + " after " + g1);

        // 3. Resumed once more, it runs to the end: the result of an uninterrupted run.
        deletePids(results);
        LcgRank.hurry(results); // what follows the resume only waits for the end
        FerryProcess.Result third = FerryProcess.run(List.of("-Xmx384m"), run.toArray(String[]::new));
        assertEquals(0, third.exit(), third.out() + third.err());
        assertTrue(third.out().contains("roll back to generation " + g2), third.out());
        for (int r = 0; r < RANKS; r++) {
            assertEquals(Long.toString(LcgRank.uninterrupted(r, STEPS)),
                    Files.readString(results.resolve("rank-" + r)).trim());
        }
    }

    /** The generation the run's "halted: generation G was established S s before the deadline" names (S > 0). */
    private static long haltedGeneration(String line) {
        Matcher m = Pattern.compile("halted: generation (\\d+) was established ([0-9.]+) s before the deadline")
                .matcher(line);
        assertTrue(m.find(), line);
        assertTrue(Double.parseDouble(m.group(2)) > 0, line);
        return Long.parseLong(m.group(1));
    }

    private static void awaitRanksRunning(Path results) throws InterruptedException {
        for (int i = 0; i < 600
                && !(Files.exists(results.resolve("pid-0")) && Files.exists(results.resolve("pid-1"))); i++) {
            Thread.sleep(100);
        }
        assertTrue(Files.exists(results.resolve("pid-1")), "the ranks did not start");
    }

    private static void deletePids(Path results) throws IOException {
        for (int r = 0; r < RANKS; r++) {
            Files.deleteIfExists(results.resolve("pid-" + r));
        }
    }
}
