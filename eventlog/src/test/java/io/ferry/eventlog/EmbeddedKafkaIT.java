package io.ferry.eventlog;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

class EmbeddedKafkaIT {
    @TempDir
    Path tmp;

    @Test
    void brokerStartsServesAndKeepsItsTopicsAcrossRestarts() throws Exception {
        try (EmbeddedKafka k = EmbeddedKafka.start(tmp.resolve("kafka"));
             Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, k.bootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic("t", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        try (EmbeddedKafka k = EmbeddedKafka.start(tmp.resolve("kafka"));
             Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, k.bootstrapServers()))) {
            assertTrue(admin.listTopics().names().get(30, TimeUnit.SECONDS).contains("t"));
        }
        assertTrue(java.nio.file.attribute.PosixFilePermissions.toString(java.nio.file.Files.getPosixFilePermissions(
                tmp.resolve("kafka"))).equals("rwx------"), "the event log is its owner's only");
    }

    @Test
    void aSecondBrokerOverTheSameLogIsRefusedNotStarted() throws Exception {
        try (EmbeddedKafka k = EmbeddedKafka.start(tmp.resolve("kafka"))) {
            EmbeddedKafka.BusyException e = org.junit.jupiter.api.Assertions.assertThrows(
                    EmbeddedKafka.BusyException.class, () -> EmbeddedKafka.start(tmp.resolve("kafka")));
            assertTrue(e.getMessage().contains("in use by another ferry process"), e.getMessage());
        }
        EmbeddedKafka.start(tmp.resolve("kafka")).close(); // released on close
    }

    /** Issue 13's finding: the log is the coordinator's state, so its topics must keep events forever. */
    @Test
    void theEventsCommandsAndDeadLetterTopicsKeepEverythingForever() throws Exception {
        try (EmbeddedKafka k = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(k.bootstrapServers(), LogSettings.EMBEDDED);
             Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, k.bootstrapServers()))) {
            for (String topic : List.of(KafkaLog.EVENTS, KafkaLog.COMMANDS, KafkaLog.DEAD_LETTER)) {
                org.apache.kafka.common.config.ConfigResource r = new org.apache.kafka.common.config.ConfigResource(
                        org.apache.kafka.common.config.ConfigResource.Type.TOPIC, topic);
                org.apache.kafka.clients.admin.Config c = admin.describeConfigs(List.of(r)).all().get(30, TimeUnit.SECONDS).get(r);
                org.junit.jupiter.api.Assertions.assertEquals("-1", c.get("retention.ms").value(), topic);
                org.junit.jupiter.api.Assertions.assertEquals("-1", c.get("retention.bytes").value(), topic);
            }
            org.apache.kafka.common.config.ConfigResource state = new org.apache.kafka.common.config.ConfigResource(
                    org.apache.kafka.common.config.ConfigResource.Type.TOPIC, KafkaLog.STATE);
            org.junit.jupiter.api.Assertions.assertEquals("compact",
                    admin.describeConfigs(List.of(state)).all().get(30, TimeUnit.SECONDS).get(state).get("cleanup.policy").value());
        }
    }

    /** Topics a site made itself are checked: a retention or compaction that would drop the coordinator's events is said. */
    @Test
    void anEventsTopicMadeWithAFiniteRetentionOrCompactionIsNamed() throws Exception {
        try (EmbeddedKafka k = EmbeddedKafka.start(tmp.resolve("kafka"));
             Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, k.bootstrapServers()))) {
            admin.createTopics(List.of(
                    new org.apache.kafka.clients.admin.NewTopic(KafkaLog.EVENTS, 8, (short) 1)
                            .configs(Map.of("retention.ms", "604800000", "cleanup.policy", "compact")),
                    new org.apache.kafka.clients.admin.NewTopic(KafkaLog.COMMANDS, 8, (short) 1),
                    new org.apache.kafka.clients.admin.NewTopic(KafkaLog.STATE, 8, (short) 1),
                    new org.apache.kafka.clients.admin.NewTopic(KafkaLog.DEAD_LETTER, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            try (KafkaLog log = new KafkaLog(k.bootstrapServers())) {
                List<String> problems = log.retentionProblems();
                org.junit.jupiter.api.Assertions.assertEquals(2, problems.size(), problems.toString());
                org.junit.jupiter.api.Assertions.assertTrue(problems.get(0).contains("retention.ms=604800000")
                        && problems.get(0).contains("--add-config retention.ms=-1"), problems.get(0));
                org.junit.jupiter.api.Assertions.assertTrue(problems.get(1).contains("cleanup.policy=compact"), problems.get(1));
            }
        }
        try (EmbeddedKafka k = EmbeddedKafka.start(tmp.resolve("kafka2"));
             KafkaLog made = new KafkaLog(k.bootstrapServers(), LogSettings.EMBEDDED);
             KafkaLog again = new KafkaLog(k.bootstrapServers(), LogSettings.EMBEDDED)) {
            org.junit.jupiter.api.Assertions.assertEquals(List.of(), again.retentionProblems(), "Ferry's own topics keep everything");
        }
    }
}
