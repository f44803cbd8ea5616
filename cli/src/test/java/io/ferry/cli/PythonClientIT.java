package io.ferry.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The Python client (clients/python) with the system Python: its example training loop, two
 * ranks in socket mode under a real `ferry run --auto-recover`, one SIGKILLed after a snapshot
 * was established; the job resumes from that snapshot and ends with the weights of an
 * uninterrupted run.
 */
class PythonClientIT {
    private static final int STEPS = 1200;
    private static final Path PYTHON = Path.of("/usr/bin/python3");

    @TempDir
    Path tmp;

    @Test
    void theClientsOwnTestsPassAgainstARealSocket() throws Exception {
        assumeTrue(Files.isExecutable(PYTHON), "no system Python at " + PYTHON + " (Debian's python3)");
        Path client = Path.of("").toAbsolutePath().getParent().resolve("clients/python");
        Process p = new ProcessBuilder(PYTHON.toString(), "-B", "-m", "unittest", "discover", "-s", "tests", "-v")
                .directory(client.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), out);
        System.out.println(out);
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("Ran 6 tests") && out.trim().endsWith("OK"), out);
    }

    @Test
    void aTrainingLoopKilledMidRunResumesFromItsSnapshotAndEndsWithTheUninterruptedResult() throws Exception {
        assumeTrue(Files.isExecutable(PYTHON), "no system Python at " + PYTHON + " (Debian's python3)");
        Path root = Path.of("").toAbsolutePath().getParent(); // Failsafe runs in cli/
        Path train = root.resolve("clients/python/examples/train.py");
        Path expected = Files.createDirectories(tmp.resolve("expected"));
        for (int rank = 0; rank < 2; rank++) { // without Ferry: the plain training loop, as each rank
            ProcessBuilder pb = new ProcessBuilder(PYTHON.toString(), "-B", train.toString(), Integer.toString(STEPS),
                    expected.toString()).redirectErrorStream(true);
            pb.environment().keySet().removeIf(k -> k.startsWith("FERRY_"));
            pb.environment().put("FERRY_RANK", Integer.toString(rank));
            Process p = pb.start();
            String out = new String(p.getInputStream().readAllBytes());
            assertTrue(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0, out);
        }

        Path results = Files.createDirectories(tmp.resolve("results"));
        ProcessBuilder run = FerryProcess.builder(List.of("-Xmx384m"), "run", "--job", "py", "--ranks", "2",
                "--interval", "2s",
                "--auto-recover", "--http", "off", "--home", tmp.resolve("home").toString(), "--",
                PYTHON.toString(), "-B", train.toString(), Integer.toString(STEPS), results.toString())
                        .redirectErrorStream(true);
        run.environment().put("TRAIN_STEP_SECONDS", "0.015");
        Process ferry = run.start();
        Lines out = new Lines(ferry, "py");
        try {
            String established = out.await("a snapshot", l -> l.matches(".*generation (\\d+) established.*"));
            long g = Lines.generationOf(established);
            long pid = Long.parseLong(Files.readString(results.resolve("pid-1")).trim());
            new ProcessBuilder("kill", "-KILL", Long.toString(pid)).inheritIO().start().waitFor();
            String restored = out.await("the rollback", l -> l.contains("restored generation"));
            assertTrue(Lines.generationOf(restored) >= g, restored);
            out.await("rank 1 resuming in Python", l -> l.contains("rank 1 resumes at step"));
            assertTrue(ferry.waitFor(120, TimeUnit.SECONDS), "the job did not end: " + out.lines);
            assertEquals(0, ferry.exitValue(), String.join("\n", out.lines));
        } finally {
            ferry.destroyForcibly();
        }
        for (int rank = 0; rank < 2; rank++) {
            assertEquals(Files.readString(expected.resolve("rank-" + rank)),
                    Files.readString(results.resolve("rank-" + rank)),
                    "rank " + rank + " ends as an uninterrupted run does");
        }
    }
}
