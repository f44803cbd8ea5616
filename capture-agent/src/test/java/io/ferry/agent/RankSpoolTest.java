package io.ferry.agent;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The link ranks find their host's agent by: an agent never takes it from another live agent of
 * the same user on the host (several agents on one host: three `--node` names on a test bed, two
 * jobs' agents), and takes it once that agent is gone. Before, the last agent started took it
 * whatever, and after `ferry chaos kill-node n2` it named n2's dead agent: every rank of an
 * `mpirun` job failed at start.
 */
class RankSpoolTest {
    @TempDir
    Path tmp;

    @Test
    void theLinkStaysWithTheLiveAgentAndPassesOnOnceItIsGone() throws Exception {
        Path runtime = Files.createDirectories(tmp.resolve("runtime"));
        Path link = runtime.resolve("ferry-agent-h");
        Path n1 = tmp.resolve("n1");
        Path n2 = tmp.resolve("n2");
        try (HomeLock first = HomeLock.take(n1)) {
            new RankSpool(n1, "h", runtime);
            assertEquals(n1.resolve("run").toRealPath(), link.toRealPath());
            try (HomeLock second = HomeLock.take(n2)) {
                new RankSpool(n2, "h", runtime);
                assertEquals(n1.resolve("run").toRealPath(), link.toRealPath(), "left to the live agent of n1");
            }
        }
        try (HomeLock again = HomeLock.take(n2)) { // n1's agent is gone: the next agent takes the link
            new RankSpool(n2, "h", runtime);
            assertEquals(n2.resolve("run").toRealPath(), link.toRealPath());
        }
    }
}
