package io.ferry.eventlog;

import io.ferry.model.Event;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** One agent per node name, against a real broker: the presence of agents read back by one that starts. */
class NodeClaimIT {
    @TempDir
    Path tmp;

    private static final Duration INTERVAL = Duration.ofSeconds(1); // a name is held three of them after the last word

    @Test
    void aSecondAgentUnderANameIsRefusedWhileTheFirstBeatsAndAdmittedOnceItIsGone() throws Exception {
        try (EmbeddedKafka k = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(k.bootstrapServers(), KafkaClientSettings.NONE, LogSettings.EMBEDDED)) {
            NodeClaim first = NodeClaim.claim(log, "n1", "hostA", "/a", INTERVAL);
            assertTrue(first.epoch() >= 0, "the offset of its first presence");
            try (NodeClaim other = NodeClaim.claim(log, "n2", "hostA", "/b", INTERVAL)) {
                assertFalse(other.incarnation().equals(first.incarnation()), "another name, another agent: admitted");
            }
            NodeClaim.NodeNameTakenException e = assertThrows(NodeClaim.NodeNameTakenException.class,
                    () -> NodeClaim.claim(log, "n1", "hostB", "/a", INTERVAL));
            assertTrue(e.getMessage().contains("node name n1 is taken: the agent on host hostA with home /a"),
                    e.getMessage());
            assertThrows(NodeClaim.NodeNameTakenException.class, () -> NodeClaim.claim(log, "n1", "hostA", "/other",
                    INTERVAL), "the same host, another home: another agent");
            // The same host and home: this agent restarted (its home's lock proves the earlier one gone).
            NodeClaim.claim(log, "n1", "hostA", "/a", INTERVAL).close();

            first.close(); // it stops and says so: the name is free at once
            NodeClaim after = NodeClaim.claim(log, "n1", "hostB", "/b", INTERVAL);
            assertTrue(after.epoch() > first.epoch(), "a newer agent of the name, a higher epoch");

            // An agent that dies without a word (its beats stop): its name is free three of its intervals later.
            after.beats.shutdownNow();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            NodeClaim third = null;
            while (third == null) {
                try {
                    third = NodeClaim.claim(log, "n1", "hostC", "/c", INTERVAL);
                } catch (NodeClaim.NodeNameTakenException stillFresh) {
                    assertTrue(System.nanoTime() < deadline, "the name of an agent that died was never freed");
                    Thread.sleep(INTERVAL.toMillis() / 2);
                }
            }
            third.close();
        }
    }

    @Test
    void aBeatCountsOnlyForAnotherIncarnationOfTheSameNameWithinThreeIntervals() {
        Event.AgentPresent mine = new Event.AgentPresent("n1", "00000000000000aa", "h", "/home", 1000, -1, false);
        assertTrue(NodeClaim.alive(new Event.AgentPresent("n1", "00000000000000bb", "h2", "/home", 1000, -1, false),
                7000, mine, 10_000));
        assertFalse(NodeClaim.alive(new Event.AgentPresent("n1", "00000000000000bb", "h2", "/home", 1000, -1, false),
                6999, mine, 10_000), "older than three of its intervals: gone");
        assertFalse(NodeClaim.alive(new Event.AgentPresent("n2", "00000000000000bb", "h2", "/home", 1000, -1, false),
                9000, mine, 10_000), "another name");
        assertFalse(NodeClaim.alive(mine, 9000, mine, 10_000), "itself");
        assertFalse(NodeClaim.alive(new Event.AgentPresent("n1", "00000000000000bb", "h2", "/home", 1000, -1, false)
                .leave(), 9000, mine, 10_000), "one that said it leaves");
        assertFalse(NodeClaim.alive(new Event.AgentPresent("n1", "00000000000000bb", "h", "/home", 1000, -1, false),
                9000, mine, 10_000), "its predecessor on the same host and home");
    }
}
