package io.ferry.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.ferry.agent.capture.Capturers;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code ferry capture} as a user runs it: on a live process, and where the kernel says no. */
class CaptureIT {
    @TempDir
    Path tmp;

    @Test
    void capturesALiveProcessIntoACoreGdbOpensAndLeavesItRunning() throws Exception {
        Process sleeper = new ProcessBuilder("sleep", "300").start();
        try {
            Path out = tmp.resolve("hung");
            FerryProcess.Result r = FerryProcess.run("capture", "--pid", Long.toString(sleeper.pid()), "--out",
                    out.toString());
            assertEquals(0, r.exit(), r.err());
            assertTrue(r.out().contains("stall"), r.out());
            assertTrue(r.out().contains("open it with: gdb /usr/bin/sleep " + out.resolve("core." + sleeper.pid())),
                    r.out());
            assertTrue(r.out().contains("needs an external restorer"), r.out());
            assertTrue(sleeper.isAlive());
            FerryProcess.Result json = FerryProcess.run("capture", "--pid", Long.toString(sleeper.pid()), "--out",
                    tmp.resolve("again").toString(), "--json");
            assertEquals(0, json.exit(), json.err());
            var report = new ObjectMapper().readTree(json.out());
            assertEquals(sleeper.pid(), report.get("pid").asLong());
            assertTrue(report.get("bytes").asLong() > 0 && report.get("stallSeconds").asDouble() > 0, json.out());
            assertTrue(report.get("gdb").asText().startsWith("gdb /usr/bin/sleep "), json.out());
            assertTrue(report.get("restartCommand").isNull(), "a proc image has no restart command: " + json.out());
            assertTrue(Files.readString(Path.of("/proc", Long.toString(sleeper.pid()), "stat"))
                    .matches("^\\d+ \\(sleep\\) S .*\\s*"),
                    "thawed: sleeping again, not stopped");
            Process gdb = new ProcessBuilder("gdb", "-nx", "-batch", "-ex", "info threads", "/usr/bin/sleep",
                    out.resolve("core." + sleeper.pid()).toString()).redirectErrorStream(true).start();
            String said = new String(gdb.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(gdb.waitFor(60, TimeUnit.SECONDS));
            assertTrue(said.contains("LWP " + sleeper.pid()), said);
            assertTrue(said.contains("Program terminated with signal SIGSTOP"), said);
        } finally {
            sleeper.destroyForcibly();
        }
    }

    /**
     * A one-off CRIU dump that can be restored: a program that appends to a file (and prints its
     * steps to a pipe) is dumped with {@code ferry capture --method criu}, runs on, is SIGKILLed,
     * and {@code ferry restore} brings it back from the dump: its file rolled back to the dump,
     * its output on ferry restore's, and it ends with the file of an uninterrupted run.
     */
    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void aCriuDumpRestoresWithFerryRestoreAsIfUninterrupted() throws Exception {
        Optional<String> why = Capturers.of("criu").unavailable();
        Assumptions.assumeTrue(why.isEmpty(), () -> "criu unavailable: " + why.orElse(""));
        Path bin = ScenarioPrograms.compile(tmp, "appender");
        // Enough steps that the program runs on well after the dump, however long the dump takes on a busy machine
        // (with 120 it had once printed 110 lines by the time `ferry capture` returned, and 10 more never came; with
        // 400 it once ended during a 12 s dump): 30 s at 25 ms a step. The restored one is hurried to its end.
        int steps = 1200;
        String reference = ScenarioPrograms.reference(bin, tmp.resolve("reference.txt"), steps);
        Path out = tmp.resolve("out.txt");
        Path hurry = tmp.resolve("hurry");
        ProcessBuilder started = new ProcessBuilder("setsid", bin.toString(), out.toString(), Integer.toString(steps),
                "25").redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        started.environment().put("SCENARIO_HURRY", hurry.toString());
        Process p = started.start();
        BufferedReader steps0 = new BufferedReader(new InputStreamReader(p.getInputStream()));
        awaitStep(steps0, 10);
        Path img = tmp.resolve("dump");
        FerryProcess.Result cap = FerryProcess.run("capture", "--pid", Long.toString(p.pid()), "--method", "criu",
                "--out", img.toString());
        assertEquals(0, cap.exit(), cap.err());
        assertTrue(cap.out().contains("restart with: ferry restore " + img.toAbsolutePath()), cap.out());
        int dumpedLines = Files.readAllLines(out).size();
        awaitStep(steps0, Math.min(dumpedLines + 10, steps - 1));
        p.destroyForcibly();
        p.waitFor();

        Process restore = FerryProcess.builder(List.of(), "restore", img.toString()).start();
        BufferedReader resumed = new BufferedReader(
                new InputStreamReader(restore.getInputStream()));
        int first = awaitStep(resumed, 0);
        assertTrue(first >= 10 && first <= dumpedLines,
                "resumed from the dump (after step 10, before line " + dumpedLines
                + " was written): its first step is " + first);
        Files.createFile(hurry); // no pause from here: the same output, sooner
        while (resumed.readLine() != null) {
            // to its end
        }
        assertTrue(restore.waitFor(2, TimeUnit.MINUTES));
        assertEquals(0, restore.exitValue(),
                new String(restore.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
        assertEquals(reference, Files.readString(out), "the file, dumped, killed, restored");
    }

    /** Reads "step N" lines to the first N at least {@code n}; fails at the end of the output. */
    private static int awaitStep(BufferedReader in, int n) throws IOException {
        for (String l; (l = in.readLine()) != null; ) {
            if (l.startsWith("step ") && Integer.parseInt(l.substring(5).trim()) >= n) {
                return Integer.parseInt(l.substring(5).trim());
            }
        }
        throw new IOException("the output ended before step " + n);
    }

    @Test
    void permissionDeniedIsOneLineAndLeavesNothing() throws Exception {
        // A process of another user, captured by a ferry without capabilities: the kernel refuses the SIGSTOP.
        Process other = new ProcessBuilder("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sleep",
                "300").start();
        try {
            // Until setpriv has changed its ids and run sleep, the process is root's, as this ferry is: capturable.
            awaitNobodysSleep(other);
            List<String> jvm = new ArrayList<>();
            ProcessBuilder pb = FerryProcess.builder(jvm, "capture", "--pid", Long.toString(other.pid()), "--out",
                    tmp.resolve("denied").toString());
            if (isRoot()) {
                pb.command().addAll(0, List.of("setpriv", "--bounding-set=-all", "--inh-caps=-all", "--"));
            }
            Process p = pb.start();
            String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(2, TimeUnit.MINUTES));
            assertEquals(1, p.exitValue(), err);
            assertEquals(1, err.lines().count(), err);
            assertTrue(err.startsWith("ferry: permission denied to ") && err.contains(" process " + other.pid()
                    + ": capture it as its owner or as root"), err);
            assertFalse(Files.exists(tmp.resolve("denied")));
            try (var left = Files.list(tmp)) {
                assertEquals(0, left.count(), "no partial image");
            }
            assertTrue(other.isAlive());
        } finally {
            other.destroyForcibly();
        }
    }

    /** Waits until {@code p} is {@code sleep} running as nobody (65534) for every uid of /proc/PID/status. */
    private static void awaitNobodysSleep(Process p) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        Path status = Path.of("/proc", Long.toString(p.pid()), "status");
        List<String> lines = Files.readAllLines(status);
        while (!(lines.contains("Name:\tsleep") && lines.contains("Uid:\t65534\t65534\t65534\t65534"))) {
            assertTrue(p.isAlive() && System.nanoTime() < deadline, "not nobody's sleep: " + lines);
            Thread.sleep(10);
            lines = Files.readAllLines(status);
        }
    }

    @Test
    void badArgumentsAreOneLine() throws Exception {
        FerryProcess.Result none = FerryProcess.run("capture", "--pid", "999999999", "--out",
                tmp.resolve("x").toString());
        assertEquals(1, none.exit());
        assertEquals("ferry: no process 999999999\n", none.err());
        FerryProcess.Result method = FerryProcess.run("capture", "--pid", "1", "--method", "gcore", "--out",
                tmp.resolve("y").toString());
        assertEquals(1, method.exit());
        assertTrue(method.err().startsWith("ferry: unknown capture method 'gcore'"), method.err());
        FerryProcess.Result usage = FerryProcess.run("capture", "--out", tmp.resolve("z").toString());
        assertEquals(2, usage.exit());
    }

    private static boolean isRoot() throws Exception {
        return Files.readString(Path.of("/proc/self/status")).lines().anyMatch(l -> l.matches("Uid:\\s+0\\s.*"));
    }
}
