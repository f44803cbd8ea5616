package io.ferry.cli;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
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
    private final Children children = new Children();

    @AfterEach
    void stopAll() {
        children.stopAll();
    }

    @Test
    void anAgentNotStartedWithAllowChaosRefusesToKillARank() throws Exception {
        String kafka = "127.0.0.1:" + TestBed.freePort();
        children.coordinator(tmp.resolve("service"), kafka);
        Lines agent = children.agent(kafka, "n0", tmp.resolve("n0"));
        Path results = Files.createDirectories(tmp.resolve("results"));
        children.start(FerryProcess.builder(List.of("-Xmx256m"), "run", "--kafka", kafka, "--job", "calm", "--ranks",
                "1",
                "--nodes", "n0", "--interval", "0", "--store", tmp.resolve("store").toString(), "--",
                LcgRank.script(tmp, 100_000).toString(), results.toString()));
        while (!Files.exists(results.resolve("pid-0"))) {
            Thread.sleep(100);
        }
        long rank = Long.parseLong(Files.readString(results.resolve("pid-0")).trim());

        FerryProcess.Result chaos = FerryProcess.run("chaos", "kill-rank", "calm", "0", "--kafka",
                kafka);
        assertEquals(0, chaos.exit(), chaos.out() + chaos.err());
        agent.await("the refusal", l -> l.contains("chaos refused") && l.contains("--allow-chaos"));
        assertTrue(ProcessHandle.of(rank).map(ProcessHandle::isAlive).orElse(false), "the rank runs on");
    }
}
