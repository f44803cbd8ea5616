package io.ferry.agent.capture;

import io.ferry.staging.Progress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Kill and resume with the real DMTCP and CRIU, as the agent drives them (launch command,
 * capture, restore into a fresh rank area): an unmodified C program (threads, a 16 MiB heap, a
 * file it appends to) is captured, SIGKILLed, restored, captured again after the restore,
 * killed again, restored again, and must leave exactly the file an uninterrupted run leaves.
 * The generous bounds are the test's timeout; nothing is timed. Skipped, saying why, where a
 * tool is missing.
 */
class TransparentRestartIT {
    private static final int STEPS = 120;
    private static final String STEP_MILLIS = "25";

    @TempDir
    Path tmp;

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void dmtcpResumesAKilledProgramTwiceWithItsFileAsAnUninterruptedRunLeavesIt() throws Exception {
        killAndResumeTwice(Capturers.of("dmtcp"), "appender");
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void criuResumesAKilledProgramTwiceWithItsFileAsAnUninterruptedRunLeavesIt() throws Exception {
        killAndResumeTwice(Capturers.of("criu"), "appender");
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void criuResumesAParentAndItsChildJoinedByAPipe() throws Exception {
        killAndResumeTwice(Capturers.of("criu"), "pipetree");
    }

    /**
     * An image DMTCP refuses (here without the ckpt_*_files directory it needs, as Ferry stored
     * images before issue 37) fails the restore itself, so the job falls back to an older
     * generation, instead of starting a rank that dies at once and is rolled back to the same image.
     */
    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void anImageDmtcpRefusesFailsTheRestoreNotTheRank() throws Exception {
        Capturer c = Capturers.of("dmtcp");
        Scenario.requireAvailable(c);
        Process p = launchAndCapture(c, tmp.resolve("img"));
        Scenario.kill(p);
        try (var files = Files.list(tmp.resolve("img"))) {
            for (Path f : files.filter(f -> f.getFileName().toString().matches("ckpt_.*_files")).toList()) {
                ImageDirs.delete(f);
            }
        }
        java.io.IOException e = assertThrows(java.io.IOException.class,
                () -> c.restore(tmp.resolve("img"), fresh(tmp.resolve("rank")), streams(c, new ProcessBuilder())));
        assertTrue(e.getMessage().contains("dmtcp_restart refused the image"), e.getMessage());
    }

    /**
     * The same for CRIU: a restore that cannot be done (here: the process's pid is taken, by the
     * process itself, which Ferry sees before CRIU would) is an error.
     */
    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void aRestoreCriuRefusesIsAnError() throws Exception {
        Capturer c = Capturers.of("criu");
        Scenario.requireAvailable(c);
        Process p = launchAndCapture(c, tmp.resolve("img"));
        try {
            java.io.IOException e = assertThrows(java.io.IOException.class,
                    () -> c.restore(tmp.resolve("img"), fresh(tmp.resolve("rank")), streams(c, new ProcessBuilder())));
            assertTrue(e.getMessage().contains("criu restore of") && e.getMessage().contains("pids [" + p.pid() + "]")
                    && e.getMessage().contains("still taken"), e.getMessage());
        } finally {
            Scenario.kill(p);
        }
    }

    private Process launchAndCapture(Capturer c, Path img) throws Exception {
        Path rankDir = fresh(tmp.resolve("rank"));
        Process p = streams(c, new ProcessBuilder(c.launchCommand(List.of(Scenario.binary("appender").toString(),
                tmp.resolve("out.txt").toString(), "1000000", STEP_MILLIS), rankDir))).start(); // runs until killed
        Scenario.Steps steps = new Scenario.Steps(p);
        steps.awaitStep(5);
        c.capture(c.target(p.pid()).orElseThrow(), rankDir, img, Progress.NONE);
        return p;
    }

    private void killAndResumeTwice(Capturer c, String program) throws Exception {
        Scenario.requireAvailable(c);
        String expected = Scenario.reference(program, tmp.resolve("reference.txt"), STEPS);
        Path out = tmp.resolve("out.txt");
        Path rankDir = fresh(tmp.resolve("rank"));
        Process p = streams(c, new ProcessBuilder(c.launchCommand(List.of(Scenario.binary(program).toString(),
                out.toString(), Integer.toString(STEPS), STEP_MILLIS), rankDir))).start();

        int resumedAt = -1;
        for (int round = 1; round <= 2; round++) {
            Scenario.Steps steps = new Scenario.Steps(p);
            int captured = steps.awaitStep(resumedAt + 10);
            long pid = c.target(p.pid()).orElseThrow();
            Path img = tmp.resolve("img" + round);
            // Round 2 captures a restored process: DMTCP's next capture needs the restart's coordinator port.
            Capturer.Captured cap = c.capture(pid, rankDir, img, Progress.NONE);
            assertTrue(cap.imageBytes() > 4L << 20, cap.summary());
            System.err.println(c.method() + " " + program + " round " + round + ": " + cap.summary());
            if (c.method().equals("dmtcp")) { // everything DMTCP wrote for the checkpoint, after a restart too
                try (var files = Files.list(img)) {
                    assertEquals(List.of("ckpt_*.dmtcp", "ckpt_*_files", "dmtcp_restart_script_*.sh"), files
                            .map(f -> f.getFileName().toString().replaceAll("^(ckpt|dmtcp_restart_script)(_.*?)?(\\.dmtcp|_files|\\.sh)$", "$1_*$3"))
                            .distinct().sorted().toList(), "image " + round);
                }
            }
            // The image holds at most the lines written by now; once the program is 10 steps past
            // them, the file holds lines the image does not know, and the restore must roll them back.
            int linesAfterCapture = Files.readAllLines(out).size();
            steps.awaitStep(linesAfterCapture + 10);
            Scenario.kill(p);
            steps.close();
            rankDir = fresh(rankDir);
            p = c.restore(img, rankDir, streams(c, new ProcessBuilder()));
            if (c.method().equals("criu")) {
                assertEquals(pid, p.pid(), "criu restores the tree under its own pids");
            }
            steps = new Scenario.Steps(p);
            resumedAt = steps.next();
            assertTrue(resumedAt > captured && resumedAt <= linesAfterCapture, "resumed from the image, taken after step "
                    + captured + " and before line " + linesAfterCapture + " was written, not from the start nor from the"
                    + " kill: the first step after the restore is " + resumedAt);
        }
        Scenario.Steps rest = new Scenario.Steps(p);
        assertEquals(0, rest.awaitExit(), c.method() + " restored " + program + " exit code");
        assertEquals(expected, Files.readString(out), "the file the program appended to, killed twice and resumed");
    }

    /** As the agent gives them: the agent's streams, or, where the method owns them, /dev/null in and pipes out. */
    private static ProcessBuilder streams(Capturer c, ProcessBuilder pb) {
        pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        return c.ownsStreams() ? pb.redirectErrorStream(true) : pb.redirectError(ProcessBuilder.Redirect.INHERIT);
    }

    private static Path fresh(Path dir) throws Exception {
        ImageDirs.delete(dir);
        return Files.createDirectories(dir);
    }
}
