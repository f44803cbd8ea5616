package io.ferry.agent;

import io.ferry.model.Event;
import io.ferry.model.ImageRef;
import io.ferry.staging.LocalCache;
import io.ferry.staging.Staging;
import io.ferry.staging.StagingConfig;
import io.ferry.staging.StagingPipeline;
import io.ferry.stores.Store;
import io.ferry.stores.Stores;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The agent with real rank processes: a Java rank in socket mode and a shell rank in signal mode. */
class NodeAgentIT {
    @TempDir
    Path tmp;
    /**
     * A bound on waits for something that happens once its processes have started; each wait ends
     * as soon as it happens, so the bound only says how long a failure takes to be reported.
     */
    private static final Duration READY = Duration.ofSeconds(60);
    final List<Event> events = Collections.synchronizedList(new ArrayList<>());
    /** Threads alive before the test made an agent: the agent's own are the others. */
    final Set<Thread> threadsBefore = Set.copyOf(Thread.getAllStackTraces().keySet());
    Store store;
    StagingPipeline pipeline;
    NodeAgent agent;
    LocalCache cache;

    /** Rank 0: Java (socket mode); rank 1: shell (signal mode), unless all-Java is asked for. */
    private void start(int ranks, String javaMode, Duration timeout) throws Exception {
        Path script = tmp.resolve("rank.sh");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Files.writeString(script, String.join("\n",
                "#!/bin/bash",
                "if [ \"$FERRY_RANK\" = 0 ] || [ \"" + javaMode + "\" = all ]; then",
                "  exec " + java + " -cp '" + System.getProperty("java.class.path")
                + "' io.ferry.agent.CountingRank 400 10 "
                        + tmp.resolve("result") + " " + ("hang".equals(javaMode) ? "hang" : ""),
                "fi",
                "n=0; [ -n \"$FERRY_RESTART_DIR\" ] && n=$(cat \"$FERRY_RESTART_DIR/n\")",
                "trap 'g=$(cat \"$FERRY_CKPT_DIR/REQUEST\"); echo $n > \"$FERRY_CKPT_DIR/$g/n\"; : >"
                        + " \"$FERRY_CKPT_DIR/$g/DONE\"' USR2",
                "while [ $n -lt 400 ]; do (( n++ )); sleep 0.01; done",
                "echo $n > " + tmp.resolve("result") + ".$FERRY_RANK", ""));
        script.toFile().setExecutable(true);
        store = Stores.open(tmp.resolve("store").toUri(), Map.of());
        pipeline = Staging.pipeline(store, StagingConfig.defaults(), Clock.systemUTC());
        cache = Staging.localCache(tmp.resolve("cache"));
        agent = new NodeAgent(new AgentConfig("job", ranks, "node0", List.of(script.toString()),
                Quiesce.app(timeout, "USR2"), Path.of("/tmp")), cache, pipeline, events::add);
        agent.launch(-1, Map.of());
        awaitReady("all".equals(javaMode) ? agent.ranks().keySet() : Set.of(0));
    }

    /**
     * Waits until every rank can take a checkpoint request: the ranks of {@code socketRanks} have
     * said HELLO, the others (shell ranks) have installed their SIGUSR2 trap.
     */
    private void awaitReady(Set<Integer> socketRanks) throws Exception {
        long deadline = System.nanoTime() + READY.toNanos();
        for (RankProcess r : agent.ranks().values()) {
            boolean socket = socketRanks.contains(r.rank());
            while (socket ? !r.socketMode() : !catchesUsr2(r.process())) {
                assertTrue(r.process().isAlive(), "rank " + r.rank() + " ended before it was ready: " + events);
                assertTrue(System.nanoTime() < deadline,
                        "rank " + r.rank() + (socket ? " said HELLO" : " trapped SIGUSR2"));
                Thread.sleep(10);
            }
        }
    }

    /** Whether {@code p} catches SIGUSR2 (signal 12: bit 11 of SigCgt in /proc/PID/status). */
    private static boolean catchesUsr2(ProcessHandle p) throws IOException {
        List<String> status;
        try {
            status = Files.readAllLines(Path.of("/proc", Long.toString(p.pid()), "status"));
        } catch (NoSuchFileException gone) {
            return false; // the caller sees it is not alive
        }
        for (String l : status) {
            if (l.startsWith("SigCgt:")) {
                return (Long.parseUnsignedLong(l.substring("SigCgt:".length()).trim(), 16) & (1L << 11)) != 0;
            }
        }
        throw new AssertionError("no SigCgt in /proc/" + p.pid() + "/status: " + status);
    }

    /**
     * Waits until every thread the agent ran ({@code ferry-agent-*}, not there before it was made)
     * has ended: from then on nothing more can come from it.
     */
    private void awaitAgentThreadsEnded() throws InterruptedException {
        long deadline = System.nanoTime() + READY.toNanos();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("ferry-agent-") && !threadsBefore.contains(t)) {
                t.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
                assertFalse(t.isAlive(), t.getName() + " still runs after the agent closed: "
                        + Arrays.toString(t.getStackTrace()));
            }
        }
    }

    @AfterEach
    void stop() throws Exception {
        if (agent != null) {
            agent.close();
            pipeline.close();
            store.close();
        }
    }

    private <T extends Event> List<T> of(Class<T> type) {
        synchronized (events) {
            return events.stream().filter(type::isInstance).map(type::cast).toList();
        }
    }

    @Test
    void socketAndSignalRanksAreCapturedStagedAndRestartable() throws Exception {
        start(2, "mixed", Duration.ofSeconds(20));
        CaptureResult c = agent.checkpoint(0).get();
        assertEquals(2, c.bytes().size(), events.toString());
        try (var socks = Files.list(Path.of("/tmp"))) { // the agent's control socket: its owner's processes only
            Path sock = socks.filter(p -> p.getFileName().toString()
                    .equals("ferry-job-" + ProcessHandle.current().pid() + ".sock"))
                    .findFirst().orElseThrow();
            assertEquals("rw-------",
                    PosixFilePermissions.toString(Files.getPosixFilePermissions(sock)));
        }
        for (Path d = cache.imageDir(new ImageRef("job", 0, 0)); !d.equals(tmp); d = d.getParent()) {
            assertEquals("rwx------",
                    PosixFilePermissions.toString(Files.getPosixFilePermissions(d)),
                    "the cache holds process memory: " + d);
        }
        assertTrue(Files.exists(cache.imageDir(new ImageRef("job", 0, 0)).resolve("counter")));
        assertTrue(Files.exists(cache.imageDir(new ImageRef("job", 0, 1)).resolve("n")));
        assertFalse(Files.exists(cache.imageDir(new ImageRef("job", 0, 1)).resolve("DONE")),
                "DONE is not part of the image");
        agent.checkpoint(1).get(); // requested while generation 0 may still be staging
        agent.drainStaging();
        List<Event.ImageStaged> staged = of(Event.ImageStaged.class);
        assertEquals(List.of(0L, 0L, 1L, 1L), staged.stream().map(Event.ImageStaged::generation).toList(), "in order");
        // The node's ranks of a generation are pushed together: their small images share one pack.
        var m0 = pipeline.repository().readManifest(new ImageRef("job", 0, 0)).manifest();
        var m1 = pipeline.repository().readManifest(new ImageRef("job", 0, 1)).manifest();
        assertEquals(1, m0.packs().size(), m0.packs().toString());
        assertEquals(m0.packs(), m1.packs(), "one pack for both ranks, not a part-filled pack each");
        pipeline.repository().commitSnapshot("job", 1, 2);

        String local = RestartSource.materialise(pipeline, cache, new ImageRef("job", 1, 0), tmp.resolve("r0"));
        assertEquals("local", local);
        Files.writeString(cache.imageDir(new ImageRef("job", 1, 1)).resolve("n"), "999999");
        String remote = RestartSource.materialise(pipeline, cache, new ImageRef("job", 1, 1), tmp.resolve("r1"));
        assertEquals("remote", remote, "a cached copy that does not verify is not used");
        assertFalse(Files.readString(tmp.resolve("r1/n")).contains("999999"));

        agent.stopRanks();
        agent.launch(1, Map.of(0, tmp.resolve("r0"), 1, tmp.resolve("r1")));
        for (int r = 0; r < 2; r++) {
            agent.ranks().get(r).onExit().join();
            assertEquals("400", Files.readString(tmp.resolve("result." + r)).trim());
        }
    }

    @Test
    void rankThatNeverAnswersFailsTheGenerationOnly() throws Exception {
        start(2, "hang", Duration.ofSeconds(2));
        agent.checkpoint(0).get();
        Event.CaptureFailed f = of(Event.CaptureFailed.class).get(0);
        assertTrue(f.reason().contains("ranks [0] did not answer within 2 s"), f.reason());
        assertFalse(Files.exists(cache.imageDir(new ImageRef("job", 0, 1))), "no partial image is counted");
        assertTrue(of(Event.ImageCaptured.class).isEmpty());
        assertTrue(agent.ranks().get(1).process().isAlive(), "the job goes on");
    }

    @Test
    void rankKilledMidCheckpointFailsTheGeneration() throws Exception {
        start(2, "hang", Duration.ofSeconds(30));
        var pending = agent.checkpoint(0);
        Path asked = tmp.resolve("result.asked.0"); // written by rank 0 once it has the request, and never answers it
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!Files.exists(asked)) {
            assertTrue(System.nanoTime() < deadline, "rank 0 got the checkpoint request");
            Thread.sleep(20);
        }
        assertFalse(pending.isDone(), "the checkpoint waits for rank 0's answer");
        agent.ranks().get(0).process().destroyForcibly();
        pending.get();
        Event.CaptureFailed f = of(Event.CaptureFailed.class).get(0);
        assertTrue(f.reason().contains("rank 0 exited"), f.reason());
        // The exit is reported from the process's own exit watcher, which may run after the capture saw the rank go.
        long reported = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (of(Event.RankExited.class).stream().noneMatch(e -> e.rank() == 0 && e.exitCode() != 0)) {
            assertTrue(System.nanoTime() < reported, "rank 0's exit reported: " + events);
            Thread.sleep(20);
        }
    }

    @Test
    void aCaptureThatFailsAfterSomeRanksMovedIntoTheCacheLeavesNoneOfThemThere() throws Exception {
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name"))
                && Files.isExecutable(Path.of("/usr/bin/chattr")), "needs root and chattr to make a file unsyncable");
        // Rank 1 makes its state file immutable: the agent cannot open it to fsync, after rank 0 moved into the cache.
        Path script = tmp.resolve("imm.sh");
        Files.writeString(script, String.join("\n", "#!/bin/bash",
                "trap 'g=$(cat \"$FERRY_CKPT_DIR/REQUEST\"); echo x > \"$FERRY_CKPT_DIR/$g/n\";"
                        + " [ $FERRY_RANK = 1 ] && chattr +i \"$FERRY_CKPT_DIR/$g/n\"; : > \"$FERRY_CKPT_DIR/$g/DONE\"'"
                        + " USR2",
                "while :; do sleep 0.05; done", ""));
        script.toFile().setExecutable(true);
        store = Stores.open(tmp.resolve("store").toUri(), Map.of());
        pipeline = Staging.pipeline(store, StagingConfig.defaults(), Clock.systemUTC());
        cache = Staging.localCache(tmp.resolve("cache"));
        agent = new NodeAgent(new AgentConfig("job", 2, "node0", List.of(script.toString()),
                Quiesce.app(Duration.ofSeconds(20), "USR2"), Path.of("/tmp")), cache, pipeline, events::add);
        try {
            agent.launch(-1, Map.of());
            awaitReady(Set.of());
            CaptureResult c = agent.checkpoint(0).get();
            assertTrue(c.bytes().isEmpty(), c.toString());
            assertEquals(1, of(Event.CaptureFailed.class).size(), events.toString());
            assertFalse(Files.exists(cache.imageDir(new ImageRef("job", 0, 0))),
                    "rank 0's image, moved before rank 1 failed");
            assertEquals(List.of(), cache.generations("job"), "nothing of the failed generation is left to stage");
        } finally {
            new ProcessBuilder("chattr", "-R", "-i", tmp.toString()).redirectErrorStream(true).start().waitFor();
        }
    }

    @Test
    void imagesAnAgentCapturedButDidNotStageAreStagedByTheNextAgentOfTheJob() throws Exception {
        start(2, "mixed", Duration.ofSeconds(20));
        Files.writeString(tmp.resolve("store/ferry"), "a file where the store needs a directory");
        agent.checkpoint(0).get();
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (of(Event.StagingFailed.class).isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        agent.close(); // as a crashed agent leaves it: both images in the cache, unstaged
        assertFalse(cache.isStaged(new ImageRef("job", 0, 0)));
        Files.delete(tmp.resolve("store/ferry"));
        events.clear();
        agent = new NodeAgent(new AgentConfig("job", 2, "node0", List.of(tmp.resolve("rank.sh").toString()),
                Quiesce.app(Duration.ofSeconds(20), "USR2"), Path.of("/tmp")), cache, pipeline, events::add);
        deadline = System.nanoTime() + 20_000_000_000L;
        while (of(Event.ImageStaged.class).size() < 2 && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertEquals(List.of(0L, 0L), of(Event.ImageStaged.class).stream().map(Event.ImageStaged::generation).toList(),
                events.toString());
        assertTrue(cache.isStaged(new ImageRef("job", 0, 0)) && cache.isStaged(new ImageRef("job", 0, 1)));
        assertTrue(pipeline.repository().readManifest(new ImageRef("job", 0, 1)).manifest() != null, "on the store");
    }

    @Test
    void closingWhileStagingRetriesIsQuietAndReportsNoFailure() throws Exception {
        start(2, "mixed", Duration.ofSeconds(20));
        Files.writeString(tmp.resolve("store/ferry"), "a file where the store needs a directory");
        agent.checkpoint(0).get();
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (of(Event.StagingFailed.class).size() < 2 && System.nanoTime() < deadline) {
            Thread.sleep(20); // a retry is scheduled, or running, when the agent closes
        }
        int failures = of(Event.StagingFailed.class).size();
        PrintStream err = System.err;
        ByteArrayOutputStream said = new ByteArrayOutputStream();
        System.setErr(new PrintStream(said, true));
        try {
            agent.close();
            awaitAgentThreadsEnded(); // a retry it had scheduled, or one running, has ended by then, or never ran
        } finally {
            System.setErr(err);
        }
        agent = null;
        pipeline.close();
        store.close();
        assertFalse(said.toString().contains("RejectedExecutionException"), said.toString());
        assertEquals(failures, of(Event.StagingFailed.class).size(), "closing is not a staging failure: " + events);
        assertTrue(Files.exists(cache.imageDir(new ImageRef("job", 0, 0)).resolve("counter")),
                "the images stay in the cache");
    }

    @Test
    void unwritableStoreKeepsImagesInCacheAndReportsIt() throws Exception {
        start(2, "mixed", Duration.ofSeconds(20));
        Files.writeString(tmp.resolve("store/ferry"), "a file where the store needs a directory");
        agent.checkpoint(0).get();
        agent.drainStaging();
        Event.StagingFailed f = of(Event.StagingFailed.class).get(0);
        assertTrue(f.reason().contains("cannot write"), f.reason());
        assertTrue(Files.exists(cache.imageDir(new ImageRef("job", 0, 0)).resolve("counter")), "nothing lost");
        assertFalse(cache.isStaged(new ImageRef("job", 0, 0)));
        assertTrue(of(Event.ImageStaged.class).isEmpty());
        Files.delete(tmp.resolve("store/ferry"));
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (of(Event.ImageStaged.class).size() < 2 && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        assertEquals(2, of(Event.ImageStaged.class).size(), "staging resumes when the store returns: " + events);
    }
}
