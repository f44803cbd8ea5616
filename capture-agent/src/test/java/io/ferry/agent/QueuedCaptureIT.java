package io.ferry.agent;

import io.ferry.model.Event;
import io.ferry.staging.LocalCache;
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
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A capture asked while the node's ranks were those of one launch, and still queued behind another
 * capture when a rollback stopped them and started them again, fails: the ranks running by then are
 * the rollback's, restored from an older generation, and their state is not what was asked for.
 * Real signal-mode ranks (one of whose captures is held up in its handler), a real file store; the
 * capture thread is held (in its report of the first capture's failure) until the ranks run again.
 */
class QueuedCaptureIT {
    @TempDir
    Path tmp;
    private final List<Event> events = Collections.synchronizedList(new ArrayList<>());
    private final CountDownLatch relaunched = new CountDownLatch(1);

    @Test
    void aCaptureQueuedAcrossARollbackFailsInsteadOfCapturingTheRanksStartedSince() throws Exception {
        Path slow = tmp.resolve("slow");
        Path script = tmp.resolve("rank.sh");
        Files.writeString(script, String.join("\n", "#!/bin/bash",
                "n=0; trap 'g=$(cat \"$FERRY_CKPT_DIR/REQUEST\");"
                        // while the file "slow" is there, a capture is held up in the handler (a rank still writing)
                        + " if [ -e " + slow + " ]; then : > " + tmp.resolve("began-") + "$FERRY_RANK; sleep 30; fi;"
                        + " echo \"$n\" > \"$FERRY_CKPT_DIR/$g/n\"; : > \"$FERRY_CKPT_DIR/$g/DONE\"' USR2",
                ": > " + tmp.resolve("ready-") + "$FERRY_RANK", // the trap is in place
                "while true; do (( n++ )); sleep 0.01; done", ""));
        assertTrue(script.toFile().setExecutable(true));
        LocalCache cache = Staging.localCache(tmp.resolve("cache"));
        try (Store store = Stores.open(tmp.resolve("store").toUri(), Map.of());
             StagingPipeline pipeline = Staging.pipeline(store, StagingConfig.defaults(), Clock.systemUTC());
             NodeAgent agent = new NodeAgent(new AgentConfig("job", 2, "node0", List.of(script.toString()),
                     new Quiesce("app", Duration.ofSeconds(5), "USR2", Duration.ofMillis(300)), Path.of("/tmp")),
                     cache, pipeline, e -> {
                         events.add(e);
                         // The capture thread reports the held capture's failure, then takes the queued one: it
                         // waits here until the ranks run again, as a slow report (the log away) would make it.
                         if (e instanceof Event.CaptureFailed f && f.generation() == 0) {
                             awaitQuietly(relaunched);
                         }
                     })) {
            launch(agent);
            Files.createFile(slow);
            CompletableFuture<CaptureResult> held = agent.checkpoint(0);
            await(tmp.resolve("began-0"));
            CompletableFuture<CaptureResult> queued = agent.checkpoint(1); // behind generation 0's
            // The rollback, as a launch command does it: the ranks stopped, then started again.
            agent.stopRanks();
            Files.delete(slow);
            launch(agent);
            relaunched.countDown();

            CaptureResult r = queued.get(60, TimeUnit.SECONDS);
            assertTrue(r.bytes().isEmpty(), "generation 1 captured from the ranks started since: " + r);
            assertTrue(held.get(60, TimeUnit.SECONDS).bytes().isEmpty(), "its ranks were stopped mid-capture");
            List<Event.CaptureFailed> failed = of(Event.CaptureFailed.class);
            assertTrue(failed.stream().anyMatch(f -> f.generation() == 1
                    && f.reason().contains("stopped or started again (a rollback) after generation 1 was asked for")),
                    failed.toString());
            assertTrue(of(Event.ImageCaptured.class).stream().noneMatch(c -> c.generation() <= 1), events.toString());

            // A capture asked of the ranks running now is theirs.
            assertEquals(2, agent.checkpoint(2).get(60, TimeUnit.SECONDS).bytes().size(), events.toString());
        }
    }

    private void launch(NodeAgent agent) throws Exception {
        Files.deleteIfExists(tmp.resolve("ready-0"));
        Files.deleteIfExists(tmp.resolve("ready-1"));
        agent.launch(-1, Map.of());
        await(tmp.resolve("ready-0"));
        await(tmp.resolve("ready-1"));
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void await(Path p) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!Files.exists(p)) {
            assertTrue(System.nanoTime() < deadline, "never there: " + p);
            Thread.sleep(20);
        }
    }

    private <T extends Event> List<T> of(Class<T> type) {
        synchronized (events) {
            return events.stream().filter(type::isInstance).map(type::cast).toList();
        }
    }
}
