package io.ferry.agent.capture;

import io.ferry.staging.Progress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
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
    /** 5 s at least at 25 ms a step: room for two captures, restores and the steps awaited after each. */
    private static final int STEPS = 200;
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
        c.stopped(); // as the agent does before a restore: the next ranks join a fresh coordinator
        Process restored = c.restore(tmp.resolve("img"), fresh(tmp.resolve("rank")), streams(c, new ProcessBuilder()));
        try {
            RestartRefusedException e = assertThrows(RestartRefusedException.class, () -> c.started(true, dirs -> { }));
            assertTrue(e.getMessage().contains("dmtcp_restart refused the images"), e.getMessage());
        } finally {
            Scenario.kill(restored);
            c.stopped();
        }
    }

    /**
     * A rollback that comes while a generation's capture goes rank by rank: DMTCP checkpointed every rank of
     * the node, and the ranks are stopped (as the agent stops them before a restore) before this rank's files
     * were collected. Its capture fails: it does not checkpoint whatever runs in the rank's directory by then,
     * the restored ranks, whose DMTCP files a restore has just put there (a second checkpoint of them, taken
     * while dmtcp_restart still read those files, deleted them under it).
     */
    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void aCaptureWhoseRanksWereStoppedSinceTheCheckpointFailsInsteadOfCheckpointingAgain() throws Exception {
        Capturer c = Capturers.of("dmtcp");
        Scenario.requireAvailable(c);
        Path rankDir = fresh(tmp.resolve("rank"));
        Process p = launchAndCapture(c, tmp.resolve("img1"), rankDir);
        Process restored = null;
        try (Scenario.Steps steps = new Scenario.Steps(p)) {
            steps.awaitStep(steps.next() + 5);
            c.checkpointTogether(Duration.ofMinutes(1)).orElseThrow(); // the next generation, collected below
            Scenario.kill(p);
            c.stopped(); // the rollback, and its restore from the first image into the same rank directory
            restored = c.restore(tmp.resolve("img1"), fresh(rankDir), streams(c, new ProcessBuilder()));
            long pid = p.pid();
            IOException e = assertThrows(IOException.class,
                    () -> c.capture(pid, rankDir, tmp.resolve("img2"), Progress.NONE));
            assertTrue(e.getMessage().contains("stopped (a rollback) before"), e.getMessage());
            assertTrue(Files.notExists(tmp.resolve("img2")), "no image of the next generation");
            c.started(true, dirs -> { }); // the restore's files were left to it: it runs
            try (Scenario.Steps after = new Scenario.Steps(restored)) {
                assertTrue(after.next() >= 0, "the restored rank steps on");
            }
        } finally {
            Scenario.kill(p);
            if (restored != null) {
                Scenario.kill(restored);
            }
            c.stopped();
        }
    }

    /**
     * Two ranks of a ring over TCP, each under its own {@code dmtcp_launch} and both joined to
     * the node's one coordinator, as the agent launches them: one checkpoint takes both, with
     * the messages in flight between them; rank 1 is SIGKILLed mid-run (rank 0 loses its
     * neighbours and ends too); both are restored from their images, each by its own
     * {@code dmtcp_restart}, and the ring goes on: each rank's file, which depends on every
     * message it got, ends as an uninterrupted run's. With a coordinator per rank, as before,
     * the connection between them could not be restored.
     */
    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void dmtcpRestoresTwoRanksJoinedByTcpAndTheRingGoesOn() throws Exception {
        Capturer c = Capturers.of("dmtcp");
        Scenario.requireAvailable(c);
        int steps = 200;
        int port = freePortPair();
        List<String> reference = new ArrayList<>();
        List<Process> plain = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            plain.add(new ProcessBuilder(ring(tmp.resolve("reference." + r), steps, "0", port, r))
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start());
        }
        for (int r = 0; r < 2; r++) {
            assertEquals(0, plain.get(r).waitFor(), "ring rank " + r + " uninterrupted");
            reference.add(Files.readString(tmp.resolve("reference." + r)));
        }
        int runPort = freePortPair();
        Path[] rankDir = {fresh(tmp.resolve("ranks").resolve("0")), fresh(tmp.resolve("ranks").resolve("1"))};
        Process[] p = new Process[2];
        for (int r = 0; r < 2; r++) {
            p[r] = streams(c,
                    new ProcessBuilder(c.launchCommand(ring(tmp.resolve("out." + r), steps, STEP_MILLIS, runPort,
                    r), rankDir[r]))).start();
        }
        c.started(false, dirs -> { });
        Scenario.Steps[] s = {new Scenario.Steps(p[0]), new Scenario.Steps(p[1])};
        int captured = s[0].awaitStep(10);
        Duration stall = c.checkpointTogether(Duration.ofMinutes(1)).orElseThrow();
        for (int r = 0; r < 2; r++) {
            Capturer.Captured cap = c.capture(p[r].pid(), rankDir[r], tmp.resolve("img" + r), Progress.NONE);
            assertEquals(stall, cap.stall(), "one checkpoint stopped both ranks");
            assertTrue(cap.imageBytes() > 0, cap.summary());
        }
        int linesAfterCapture = Files.readAllLines(tmp.resolve("out.0")).size();
        s[0].awaitStep(linesAfterCapture + 10);
        Scenario.kill(p[1]);
        assertEquals(1, p[0].waitFor(), "rank 0 ends once its neighbour is gone");
        c.stopped();
        for (int r = 0; r < 2; r++) {
            s[r].close();
            rankDir[r] = fresh(rankDir[r]);
            p[r] = c.restore(tmp.resolve("img" + r), rankDir[r], streams(c, new ProcessBuilder()));
        }
        c.started(true, dirs -> { });
        Scenario.Steps resumed = new Scenario.Steps(p[0]);
        int first = resumed.next();
        assertTrue(first > captured && first <= linesAfterCapture, "rank 0 resumed from the image (taken after step "
                + captured + "), not from the start nor from the kill: its first step after the restore is " + first);
        assertEquals(0, resumed.awaitExit(), "restored rank 0's exit code");
        assertEquals(0, new Scenario.Steps(p[1]).awaitExit(), "restored rank 1's exit code");
        c.stopped();
        for (int r = 0; r < 2; r++) {
            assertEquals(reference.get(r), Files.readString(tmp.resolve("out." + r)), "rank " + r + "'s file");
        }
    }

    /**
     * A node lost with its rank: ranks of two nodes, each under its node's coordinator (two
     * DMTCP computations), are checkpointed, both SIGKILLed, and both restored on the surviving
     * node, as the agent does after a node loss: each into a coordinator of its own computation
     * (one coordinator for both refuses the second: "not from current computation"), and both
     * finish as uninterrupted runs. A later generation takes both computations. The moved rank
     * keeps the path it had (same Ferry home on every node), which DMTCP's saved files need.
     */
    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void dmtcpRestoresTheRanksOfALostNodeBesideTheSurvivorsOwn() throws Exception {
        Capturer[] node = {Capturers.of("dmtcp"), Capturers.of("dmtcp")};
        Scenario.requireAvailable(node[0]);
        int steps = 200; // rank 1 runs on while rank 0 is captured
        String expected = Scenario.reference("appender", tmp.resolve("reference.txt"), steps);
        Path[] rankDir = {fresh(tmp.resolve("a").resolve("0")), fresh(tmp.resolve("b").resolve("1"))};
        Process[] p = new Process[2];
        Scenario.Steps[] s = new Scenario.Steps[2];
        for (int r = 0; r < 2; r++) {
            p[r] = streams(node[r],
                    new ProcessBuilder(node[r].launchCommand(List.of(Scenario.binary("appender").toString(),
                    tmp.resolve("out." + r).toString(), Integer.toString(steps), STEP_MILLIS), rankDir[r]))).start();
            node[r].started(false, dirs -> { });
            s[r] = new Scenario.Steps(p[r]);
        }
        for (int r = 0; r < 2; r++) {
            s[r].awaitStep(10);
            node[r].capture(p[r].pid(), rankDir[r], tmp.resolve("img" + r), Progress.NONE);
        }
        for (int r = 0; r < 2; r++) {
            s[r].awaitStep(Files.readAllLines(tmp.resolve("out." + r)).size() + 5);
            Scenario.kill(p[r]);
            node[r].stopped();
            s[r].close();
            rankDir[r] = fresh(rankDir[r]);
        }
        Capturer survivor = node[0];
        for (int r = 0; r < 2; r++) {
            p[r] = survivor.restore(tmp.resolve("img" + r), rankDir[r], streams(survivor, new ProcessBuilder()));
        }
        survivor.started(true, dirs -> { });
        for (int r = 0; r < 2; r++) {
            s[r] = new Scenario.Steps(p[r]);
        }
        s[0].awaitStep(steps / 2);
        Duration stall = survivor.checkpointTogether(Duration.ofMinutes(1)).orElseThrow();
        for (int r = 0; r < 2; r++) {
            Capturer.Captured cap = survivor.capture(p[r].pid(), rankDir[r], tmp.resolve("again" + r), Progress.NONE);
            assertTrue(cap.imageBytes() > 4L << 20 && cap.stall().compareTo(stall) <= 0, cap.summary());
        }
        for (int r = 0; r < 2; r++) {
            assertEquals(0, s[r].awaitExit(), "restored rank " + r + "'s exit code");
            assertEquals(expected, Files.readString(tmp.resolve("out." + r)), "rank " + r + "'s file");
        }
        survivor.stopped();
    }

    /**
     * The death of the node's DMTCP coordinator is a loss the agent recovers from: ranks may run
     * on without it (a ring of two did, here), never checkpointed again, so the method says so
     * ({@code lost}), and the agent kills what still runs, as a crash would. Its end by
     * {@link Capturer#stopped} is not a loss.
     */
    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void theDeathOfTheDmtcpCoordinatorIsALossAndItsStopIsNot() throws Exception {
        Capturer c = Capturers.of("dmtcp");
        Scenario.requireAvailable(c);
        Path rankDir = fresh(tmp.resolve("ranks").resolve("0"));
        Process p = streams(c, new ProcessBuilder(c.launchCommand(List.of(Scenario.binary("appender").toString(),
                tmp.resolve("out.txt").toString(), "1000000", STEP_MILLIS), rankDir))).start();
        CompletableFuture<Set<Path>> lost =
                new CompletableFuture<>();
        c.started(false, dirs -> lost.complete(dirs));
        new Scenario.Steps(p).awaitStep(3);
        ProcessHandle coordinator = ProcessHandle.of(((DmtcpCapturer) c).coordinatorPid()).orElseThrow();
        coordinator.destroyForcibly(); // SIGKILL, as a crash
        assertEquals(Set.of(rankDir.toAbsolutePath()), lost.get(30, TimeUnit.SECONDS), "the ranks it lost");
        Scenario.kill(p); // whether it ended with its coordinator (as this one may) or would run on unprotected
        c.stopped();

        CompletableFuture<Void> lostAgain = new CompletableFuture<>();
        Process q = streams(c, new ProcessBuilder(c.launchCommand(List.of(Scenario.binary("appender").toString(),
                tmp.resolve("out2.txt").toString(), "1000000", STEP_MILLIS), fresh(rankDir)))).start();
        c.started(false, dirs -> lostAgain.complete(null));
        new Scenario.Steps(q).awaitStep(3);
        c.stopped();
        Scenario.kill(q);
        Thread.sleep(1000); // "nothing happens" has no event to wait for: the stop's exit would have been seen by now
        assertTrue(!lostAgain.isDone(), "a coordinator stopped with its ranks is no loss");
    }

    /**
     * A rank frozen in the middle of a checkpoint (SIGSTOPped here, as a process stuck in the
     * kernel would be) wedges DMTCP's computation: the other rank waits at the checkpoint's
     * barrier, stopped, for ever, and every later capture would fail against a computation that
     * never runs again. The checkpoint fails at its timeout, and the computation is given up as
     * lost (both ranks' dirs), so the agent kills its ranks and the job recovers. (A rank killed
     * outright mid-checkpoint is dropped by DMTCP, which then finishes the checkpoint without it.)
     */
    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void aRankFrozenInTheMiddleOfACheckpointWedgesTheComputationWhichIsGivenUpAsLost() throws Exception {
        Capturer c = Capturers.of("dmtcp");
        Scenario.requireAvailable(c);
        Path[] rankDir = {fresh(tmp.resolve("ranks").resolve("0")), fresh(tmp.resolve("ranks").resolve("1"))};
        Process[] p = new Process[2];
        for (int r = 0; r < 2; r++) {
            p[r] = streams(c, new ProcessBuilder(c.launchCommand(List.of(Scenario.binary("appender").toString(),
                    tmp.resolve("out." + r).toString(), "1000000", STEP_MILLIS), rankDir[r]))).start();
        }
        CompletableFuture<Set<Path>> lost =
                new CompletableFuture<>();
        c.started(false, lost::complete);
        for (int r = 0; r < 2; r++) {
            new Scenario.Steps(p[r]).awaitStep(3);
        }
        try {
            assertEquals(0, new ProcessBuilder("kill", "-STOP", Long.toString(p[1].pid())).start().waitFor());
            IOException failed = assertThrows(IOException.class,
                    () -> c.checkpointTogether(Duration.ofSeconds(10)));
            assertTrue(failed.getMessage().contains("dmtcp_command"), failed.getMessage());
            assertEquals(Set.of(rankDir[0].toAbsolutePath(), rankDir[1].toAbsolutePath()),
                    lost.get(30, TimeUnit.SECONDS), "the wedged computation's ranks, given up as lost");
        } finally {
            Scenario.kill(p[0]);
            Scenario.kill(p[1]);
            c.stopped();
        }
    }

    private static List<String> ring(Path out, int steps, String millis, int port, int rank) throws Exception {
        return List.of(Scenario.binary("ring").toString(), out.toString(), Integer.toString(steps), millis,
                Integer.toString(port), Integer.toString(rank), "2");
    }

    /** A port P such that P and P + 1 were free a moment ago on the loopback. */
    private static int freePortPair() throws Exception {
        for (int i = 0; i < 50; i++) {
            try (ServerSocket a = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                 ServerSocket b = new ServerSocket(a.getLocalPort() + 1, 1,
                         InetAddress.getLoopbackAddress())) {
                return a.getLocalPort();
            } catch (BindException taken) {
                // the next one
            }
        }
        throw new IllegalStateException("no two free consecutive ports on the loopback");
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
            IOException e = assertThrows(IOException.class,
                    () -> c.restore(tmp.resolve("img"), fresh(tmp.resolve("rank")), streams(c, new ProcessBuilder())));
            assertTrue(e.getMessage().contains("criu restore of") && e.getMessage().contains("pids [" + p.pid() + "]")
                    && e.getMessage().contains("still taken"), e.getMessage());
        } finally {
            Scenario.kill(p);
        }
    }

    private Process launchAndCapture(Capturer c, Path img) throws Exception {
        return launchAndCapture(c, img, fresh(tmp.resolve("rank")));
    }

    private Process launchAndCapture(Capturer c, Path img, Path rankDir) throws Exception {
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
            // Round 2 captures a restored process: DMTCP's next capture goes to the restart's coordinator.
            Capturer.Captured cap = c.capture(pid, rankDir, img, Progress.NONE);
            assertTrue(cap.imageBytes() > 4L << 20, cap.summary());
            System.err.println(c.method() + " " + program + " round " + round + ": " + cap.summary());
            if (c.method().equals("dmtcp")) { // everything DMTCP wrote for the checkpoint, after a restart too
                try (var files = Files.list(img)) {
                    assertEquals(List.of("ckpt_*.dmtcp", "ckpt_*_files", "dmtcp_restart_script_*.sh"), files
                            .map(f -> f.getFileName().toString()
                                    .replaceAll("^(ckpt|dmtcp_restart_script)(_.*?)?(\\.dmtcp|_files|\\.sh)$",
                                    "$1_*$3"))
                            .distinct().sorted().toList(), "image " + round);
                }
            }
            // The image holds at most the lines written by now; once the program is 10 steps past
            // them, the file holds lines the image does not know, and the restore must roll them back.
            int linesAfterCapture = Files.readAllLines(out).size();
            steps.awaitStep(linesAfterCapture + 10);
            Scenario.kill(p);
            c.stopped(); // as the agent does: the method's own processes (DMTCP's coordinator) go with the ranks
            steps.close();
            rankDir = fresh(rankDir);
            p = c.restore(img, rankDir, streams(c, new ProcessBuilder()));
            c.started(true, dirs -> { });
            if (c.method().equals("criu")) {
                assertEquals(pid, p.pid(), "criu restores the tree under its own pids");
            }
            steps = new Scenario.Steps(p);
            resumedAt = steps.next();
            assertTrue(resumedAt > captured && resumedAt <= linesAfterCapture,
                    "resumed from the image, taken after step "
                    + captured + " and before line " + linesAfterCapture
                    + " was written, not from the start nor from the"
                    + " kill: the first step after the restore is " + resumedAt);
        }
        Scenario.Steps rest = new Scenario.Steps(p);
        assertEquals(0, rest.awaitExit(), c.method() + " restored " + program + " exit code");
        c.stopped();
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
