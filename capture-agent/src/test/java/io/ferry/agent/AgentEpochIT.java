package io.ferry.agent;

import io.ferry.eventlog.EmbeddedKafka;
import io.ferry.eventlog.KafkaClientSettings;
import io.ferry.eventlog.KafkaLog;
import io.ferry.eventlog.LogSettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An agent that claimed its node name at epoch 5 leaves a command stamped with epoch 9 (a newer
 * agent of the name runs) to that agent, and takes commands stamped 5 or not at all. A real
 * agent on a real (embedded) Kafka log; the commands are malformed ones, which the agent counts
 * as failed when it handles them, so what it handled and what it left are both counted.
 */
class AgentEpochIT {
    @TempDir
    Path tmp;

    @Test
    void anAgentLeavesCommandsForANewerAgentOfItsNameAlone() throws Exception {
        try (EmbeddedKafka k = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(k.bootstrapServers(), KafkaClientSettings.NONE, LogSettings.EMBEDDED);
             AgentService agent = new AgentService(log, "n1", tmp.resolve("home")).claimedAt(5).start()) {
            byte[] junk = "not a command".getBytes(StandardCharsets.UTF_8);
            log.stampCommands(node -> 9);
            log.sendRaw(KafkaLog.COMMANDS, "n1", junk); // for the newer agent: left alone
            log.stampCommands(node -> 5);
            log.sendRaw(KafkaLog.COMMANDS, "n1", junk); // for this one
            log.stampCommands(node -> -1);
            log.sendRaw(KafkaLog.COMMANDS, "n1", junk); // sent before any agent of the name was heard
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (agent.failedCommands() < 2 || agent.supersededCommands() < 1) {
                assertTrue(System.nanoTime() < deadline,
                        "the agent handled " + agent.failedCommands() + " of 2 and left "
                        + agent.supersededCommands() + " of 1");
                Thread.sleep(50);
            }
            // the commands are read in order: by the time the last two were handled, the first was read and left
            assertEquals(2, agent.failedCommands());
            assertEquals(1, agent.supersededCommands());
        }
    }
}
