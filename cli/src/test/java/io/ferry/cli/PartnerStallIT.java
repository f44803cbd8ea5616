package io.ferry.cli;

import io.ferry.model.ImageRef;
import io.ferry.staging.Staging;
import io.ferry.staging.StagingConfig;
import io.ferry.staging.StagingPipeline;
import io.ferry.stores.Store;
import io.ferry.stores.Stores;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The partner copy never blocks staging for longer than its timeout: with four idle connections
 * held open on a node's peer port and its partner's agent frozen (SIGSTOP: its peer port still
 * takes connections, as the kernel's, and never reads), a {@code --partner} checkpoint's images
 * of the live node reach the store once {@code cache.partner-timeout} (3 s here) has passed, while
 * the partner is still frozen; thawed, the partner copies its own images into the node whose port
 * the idle connections hold, and the job ends with the result of an uninterrupted run. Two real
 * agents (processes), a real coordinator with its embedded broker, real signal-mode ranks.
 */
class PartnerStallIT {
    private static final int STEPS = 1600;
    @TempDir
    Path tmp;
    private final Children children = new Children();

    @AfterEach
    void stopAll() {
        children.stopAll();
    }

    @Test
    void aFrozenPartnerAndIdlePeerConnectionsDelayStagingByThePartnerTimeoutAtMost() throws Exception {
        String kafka = "127.0.0.1:" + TestBed.freePort();
        children.coordinator(tmp.resolve("service"), kafka, "--heartbeat-timeout", "90s");
        int port0 = TestBed.freePort();
        Lines n0 = agent(kafka, "n0", port0);
        Lines n1 = agent(kafka, "n1", TestBed.freePort());
        Process n1Agent = children.last();
        Path results = Files.createDirectories(tmp.resolve("results"));
        Path storeDir = tmp.resolve("store");
        Lines run = children.start(FerryProcess.builder(List.of("-Xmx256m"), "run", "--kafka", kafka, "--job", "stall",
                "--ranks", "2", "--nodes", "n0,n1", "--interval", "2s", "--partner", "--set",
                "cache.partner-timeout=3s",
                "--store", storeDir.toString(), "--", LcgRank.script(tmp, STEPS).toString(), results.toString()));
        run.await("a partner copy made",
                l -> l.matches(".*generation \\d+: n0's images of ranks 0 copied into n1's cache.*"));

        List<Socket> idle = new ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) { // connected, and never a byte said
                idle.add(new Socket("127.0.0.1", port0));
            }
            int from = n0.lines.size();
            new ProcessBuilder("kill", "-STOP", Long.toString(n1Agent.pid())).start().waitFor();
            long frozenAt = System.nanoTime();
            String gaveUp = n0.awaitAfter(from, "n0's copy to the frozen n1 given up",
                    l -> l.contains("partner copy of rank 0 of stall") && l.contains("to n1 failed")
                            && l.contains("did not finish within"));
            long g = Lines.generationOf(gaveUp);
            // Staged to the store all the same, while n1 is still frozen.
            try (Store store = Stores.open(storeDir.toUri(), Map.of());
                 StagingPipeline pipeline = Staging.pipeline(store, StagingConfig.defaults(), Clock.systemUTC())) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (!staged(pipeline, new ImageRef("stall", g, 0))) {
                    assertTrue(System.nanoTime() < deadline, "n0's image of generation " + g + " staged: " + n0.lines);
                    Thread.sleep(100);
                }
            }
            double seconds = (System.nanoTime() - frozenAt) / 1e9;
            assertTrue(n1Agent.isAlive() && n1Agent.toHandle().info().command().isPresent(), "n1 is frozen, not gone");
            // 2 s to the next request, 3 s of the partner's timeout, a moment's staging: well inside this bound,
            // and well under the 30 s the copy of a small image waited for before it had a deadline of its own.
            assertTrue(seconds < 25, "n0's images reached the store " + seconds + " s after n1 froze");
            System.out.printf("n0's generation %d staged %.1f s after its partner froze%n", g, seconds);

            new ProcessBuilder("kill", "-CONT", Long.toString(n1Agent.pid())).start().waitFor();
            // n1's own copies into n0, whose peer port the idle connections still hold.
            int after = run.lines.size();
            run.awaitAfter(after, "n1's partner copy into n0 after the thaw",
                    l -> l.matches(".*generation \\d+: n1's images of ranks 1 copied into n0's cache.*"));
            LcgRank.hurry(results); // the rest of the job only waits for its end
        } finally {
            for (Socket s : idle) {
                s.close();
            }
        }
        run.await("the job's end", l -> l.contains("job finished"));
        assertTrue(run.lines.stream().anyMatch(l -> l.contains("job finished: every rank exited 0")),
                String.join("\n", run.lines));
        for (int r = 0; r < 2; r++) {
            assertEquals(Long.toString(LcgRank.uninterrupted(r, STEPS)),
                    Files.readString(results.resolve("rank-" + r)).trim(),
                    "rank " + r);
        }
    }

    private Lines agent(String kafka, String node, int peerPort) throws Exception {
        Lines a = children.start(FerryProcess.builder(List.of("-Xmx256m"), "agent", "--kafka", kafka, "--node", node,
                "--home", tmp.resolve(node).toString(), "--heartbeat", "1s", "--peer-listen", "127.0.0.1:" + peerPort));
        a.await("agent " + node, l -> l.startsWith("ferry agent " + node));
        return a;
    }

    private static boolean staged(StagingPipeline pipeline, ImageRef ref) {
        try {
            pipeline.repository().readManifest(ref);
            return true;
        } catch (IOException notYet) {
            return false;
        }
    }
}
