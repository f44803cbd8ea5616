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

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The agent with {@code --capture proc}: ranks under setsid, captured into the cache, killed whole on close. */
class ProcAgentIT {
    @TempDir
    Path tmp;

    @Test
    void procRanksAreCapturedIntoTheCacheAndStoppedWithTheirDescendants() throws Exception {
        List<Event> events = Collections.synchronizedList(new ArrayList<>());
        try (Store store = Stores.open(tmp.resolve("store").toUri(), Map.of());
             StagingPipeline pipeline = Staging.pipeline(store, StagingConfig.defaults(), Clock.systemUTC())) {
            LocalCache cache = Staging.localCache(tmp.resolve("cache"));
            NodeAgent agent = new NodeAgent(new AgentConfig("plain", 2, "node0", List.of("sleep", "300"),
                    new Quiesce("proc", Duration.ofSeconds(30), "USR2"), Path.of("/tmp")), cache,
                    pipeline, events::add);
            List<Long> sleepers = new ArrayList<>();
            try {
                agent.launch(-1, Map.of());
                long deadline = System.nanoTime() + 5_000_000_000L;
                while (agent.ranks().values().stream().anyMatch(r -> r.process().children().findAny().isEmpty())
                        && System.nanoTime() < deadline) {
                    Thread.sleep(10);
                }
                agent.ranks().values()
                        .forEach(r -> sleepers.add(r.process().children().findFirst().orElseThrow().pid()));
                CaptureResult c = agent.checkpoint(0).get();
                assertEquals(2, c.bytes().size(), "both ranks captured: " + events);
                assertTrue(c.stallSeconds().get(1) > 0);
                Path image = cache.imageDir(new ImageRef("plain", 0, 1));
                assertTrue(Files.exists(image.resolve("proc-capture.json")));
                try (var files = Files.list(image)) {
                    assertTrue(files.anyMatch(f -> f.getFileName().toString().equals("core." + sleepers.get(1))
                            || f.getFileName().toString().equals("core." + sleepers.get(0))));
                }
                assertTrue(agent.cannotRestore().orElseThrow().contains("external restorer"));
            } finally {
                agent.close();
            }
            for (long pid : sleepers) {
                ProcessHandle.of(pid).ifPresent(h -> h.onExit()
                        .completeOnTimeout(h, 10, TimeUnit.SECONDS).join());
                assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false), "no orphaned rank " + pid);
            }
        }
    }
}
