package io.ferry.cli;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code ferry chaos} acts only on agents started with {@code --allow-chaos}: whoever can write the
 * event log could otherwise kill any job's ranks. An agent without it refuses a kill-rank, says
 * so, and the rank runs on. (MpiClusterIT kills ranks and a node on agents that allow it.)
 */
class ChaosIT {
    @TempDir
    Path tmp;
    private final List<Process> started = new ArrayList<>();

    @AfterEach
    void stopAll() {
        for (Process p : started) {
            p.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
    }

    @Test
    void anAgentNotStartedWithAllowChaosRefusesToKillARank() throws Exception {
        String kafka = "127.0.0.1:" + TestBed.freePort();
        Lines coordinator = start(FerryProcess.builder(List.of("-Xmx384m"), "coordinator", "--home",
                tmp.resolve("service").toString(), "--listen", kafka, "--http", "off"));
        coordinator.await("the coordinator serves", l -> l.startsWith("ferry coordinator: serving jobs"));
        Lines agent = start(FerryProcess.builder(List.of("-Xmx256m"), "agent", "--kafka", kafka, "--node", "n0",
                "--home", tmp.resolve("n0").toString(), "--heartbeat", "1s", "--peer-listen", "off"));
        agent.await("agent n0", l -> l.startsWith("ferry agent n0"));
        Path results = Files.createDirectories(tmp.resolve("results"));
        start(FerryProcess.builder(List.of("-Xmx256m"), "run", "--kafka", kafka, "--job", "calm", "--ranks", "1",
                "--nodes", "n0", "--interval", "0", "--store", tmp.resolve("store").toString(), "--",
                LcgRank.script(tmp, 100_000).toString(), results.toString()));
        while (!Files.exists(results.resolve("pid-0"))) {
            Thread.sleep(100);
        }
        long rank = Long.parseLong(Files.readString(results.resolve("pid-0")).trim());

        FerryProcess.Result chaos = FerryProcess.run(List.of("-Xmx256m"), "chaos", "kill-rank", "calm", "0", "--kafka", kafka);
        assertEquals(0, chaos.exit(), chaos.out() + chaos.err());
        agent.await("the refusal", l -> l.contains("chaos refused") && l.contains("--allow-chaos"));
        assertTrue(ProcessHandle.of(rank).map(ProcessHandle::isAlive).orElse(false), "the rank runs on");
    }

    private Lines start(ProcessBuilder pb) throws java.io.IOException {
        Process p = pb.redirectErrorStream(true).start();
        started.add(p);
        return new Lines(p, "p" + started.size());
    }
}
