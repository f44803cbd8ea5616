package io.ferry.agent;

import io.ferry.model.Event;
import io.ferry.model.ImageRef;
import io.ferry.staging.LocalCache;
import io.ferry.staging.Staging;
import io.ferry.staging.StagingConfig;
import io.ferry.staging.StagingPipeline;
import io.ferry.stores.Store;
import io.ferry.stores.Stores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A capture command delivered twice (a coordinator resuming its commands from the last committed
 * offset, an agent restarted over the same cache) is acted on once: the ranks are not quiesced
 * again, and the images already in the cache, staging or staged, are neither deleted nor
 * replaced. Real signal-mode ranks, a real file store.
 */
class RepeatedCaptureIT {
    @TempDir
    Path tmp;
    private final List<Event> events = Collections.synchronizedList(new ArrayList<>());

    @Test
    void aRepeatedCaptureOfOneGenerationIsIgnoredAndLeavesItsImagesAsTheyAre() throws Exception {
        Path script = tmp.resolve("rank.sh");
        Files.writeString(script, String.join("\n", "#!/bin/bash",
                "n=0; trap 'g=$(cat \"$FERRY_CKPT_DIR/REQUEST\"); echo \"$n $(date +%s%N)\" > \"$FERRY_CKPT_DIR/$g/n\";"
                        + " : > \"$FERRY_CKPT_DIR/$g/DONE\"' USR2",
                ": > " + tmp.resolve("ready-") + "$FERRY_RANK", // the trap is in place
                "while true; do (( n++ )); sleep 0.01; done", ""));
        script.toFile().setExecutable(true);
        LocalCache cache = Staging.localCache(tmp.resolve("cache"));
        ImageRef rank0 = new ImageRef("job", 0, 0);
        try (Store store = Stores.open(tmp.resolve("store").toUri(), Map.of());
             StagingPipeline pipeline = Staging.pipeline(store, StagingConfig.defaults(), Clock.systemUTC())) {
            Object inode;
            String state;
            try (NodeAgent agent = agent(script, cache, pipeline)) {
                assertEquals(2, agent.checkpoint(0).get().bytes().size(), events.toString());
                inode = inode(cache.imageDir(rank0).resolve("n"));
                state = Files.readString(cache.imageDir(rank0).resolve("n"));
                CaptureResult again = agent.checkpoint(0).get(); // at once: generation 0 may well be staging now
                assertTrue(again.bytes().isEmpty(), "nothing captured twice: " + again);
                agent.drainStaging();
                assertEquals(inode, inode(cache.imageDir(rank0).resolve("n")), "the image was not replaced");
                assertEquals(state, Files.readString(cache.imageDir(rank0).resolve("n")));
            }
            assertEquals(2, count(Event.ImageCaptured.class), events.toString());
            assertEquals(2, count(Event.ImageStaged.class), events.toString());
            assertEquals(0, count(Event.CaptureFailed.class) + count(Event.StagingFailed.class), events.toString());
            pipeline.repository().commitSnapshot("job", 0, 2);

            // The agent restarted over the same cache: the command comes again, to an agent that never saw it.
            try (NodeAgent next = agent(script, cache, pipeline)) {
                assertTrue(next.checkpoint(0).get().bytes().isEmpty(), "generation 0 is in the cache already");
                assertEquals(inode, inode(cache.imageDir(rank0).resolve("n")));
                assertEquals("local", RestartSource.materialise(pipeline, cache, rank0, tmp.resolve("restart")),
                        "the committed image restores from the cache, unchanged");
                assertEquals(state, Files.readString(tmp.resolve("restart/n")));
                assertEquals(2, next.checkpoint(1).get().bytes().size(), "the next generation is captured as ever");
            }
            assertEquals(4, count(Event.ImageCaptured.class), events.toString());
        }
    }

    private NodeAgent agent(Path script, LocalCache cache, StagingPipeline pipeline) throws Exception {
        NodeAgent agent = new NodeAgent(new AgentConfig("job", 2, "node0", List.of(script.toString()),
                new Quiesce("app", Duration.ofSeconds(20), "USR2", Duration.ofMillis(300)), Path.of("/tmp")),
                cache, pipeline, events::add);
        Files.deleteIfExists(tmp.resolve("ready-0"));
        Files.deleteIfExists(tmp.resolve("ready-1"));
        agent.launch(-1, Map.of());
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!Files.exists(tmp.resolve("ready-0")) || !Files.exists(tmp.resolve("ready-1"))) {
            assertTrue(System.nanoTime() < deadline, "ranks started");
            Thread.sleep(20);
        }
        return agent;
    }

    private static Object inode(Path p) throws IOException {
        return Files.readAttributes(p, BasicFileAttributes.class).fileKey();
    }

    private long count(Class<? extends Event> type) {
        synchronized (events) {
            return events.stream().filter(type::isInstance).count();
        }
    }
}
