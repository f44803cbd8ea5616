package io.ferry.eventlog;

import io.ferry.model.Event;
import io.ferry.model.EventCodec;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

class EmbeddedKafkaIT {
    @TempDir
    Path tmp;

    @Test
    void brokerStartsServesAndKeepsItsTopicsAcrossRestarts() throws Exception {
        try (EmbeddedKafka k = EmbeddedKafka.start(tmp.resolve("kafka"));
             Admin admin = admin(k)) {
            admin.createTopics(List.of(new NewTopic("t", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        try (EmbeddedKafka k = EmbeddedKafka.start(tmp.resolve("kafka"));
             Admin admin = admin(k)) {
            assertTrue(admin.listTopics().names().get(30, TimeUnit.SECONDS).contains("t"));
        }
        assertTrue(PosixFilePermissions.toString(Files.getPosixFilePermissions(
                tmp.resolve("kafka"))).equals("rwx------"), "the event log is its owner's only");
    }

    @Test
    void aSecondBrokerOverTheSameLogIsRefusedNotStarted() throws Exception {
        try (EmbeddedKafka k = EmbeddedKafka.start(tmp.resolve("kafka"))) {
            EmbeddedKafka.BusyException e = Assertions.assertThrows(
                    EmbeddedKafka.BusyException.class, () -> EmbeddedKafka.start(tmp.resolve("kafka")));
            assertTrue(e.getMessage().contains("in use by another ferry process"), e.getMessage());
        }
        EmbeddedKafka.start(tmp.resolve("kafka")).close(); // released on close
    }

    /** Issue 13's finding: the log is the coordinator's state, so its topics must keep events forever. */
    @Test
    void theEventsCommandsAndDeadLetterTopicsKeepEverythingForever() throws Exception {
        try (EmbeddedKafka k = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(k.bootstrapServers(), KafkaClientSettings.NONE, LogSettings.EMBEDDED);
             Admin admin = admin(k)) {
            for (String topic : List.of(KafkaLog.EVENTS, KafkaLog.COMMANDS, KafkaLog.DEAD_LETTER)) {
                ConfigResource r = new ConfigResource(
                        ConfigResource.Type.TOPIC, topic);
                Config c = admin.describeConfigs(List.of(r)).all()
                        .get(30, TimeUnit.SECONDS).get(r);
                Assertions.assertEquals("-1", c.get("retention.ms").value(), topic);
                Assertions.assertEquals("-1", c.get("retention.bytes").value(), topic);
            }
            ConfigResource state = new ConfigResource(
                    ConfigResource.Type.TOPIC, KafkaLog.STATE);
            Assertions.assertEquals("compact",
                    admin.describeConfigs(List.of(state)).all().get(30, TimeUnit.SECONDS).get(state)
                            .get("cleanup.policy").value());
            assertExpires(admin, KafkaLog.HEARTBEATS);
        }
    }

    /**
     * A single broker has no replica to lose an event to but its own page cache: the topics the
     * coordinator's decisions rest on are fsynced at each write, those it made and those it found
     * made without that (an older Ferry's, or by hand); heartbeats are not.
     */
    @Test
    void aSingleBrokerFsyncsEachWriteOfTheTopicsDecisionsRestOn() throws Exception {
        try (EmbeddedKafka k = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(k.bootstrapServers(), KafkaClientSettings.NONE, LogSettings.EMBEDDED);
             Admin admin = admin(k)) {
            for (String topic : List.of(KafkaLog.EVENTS, KafkaLog.COMMANDS, KafkaLog.DEAD_LETTER, KafkaLog.STATE)) {
                Assertions.assertEquals("1", config(admin, topic, "flush.messages"), topic);
            }
            Assertions.assertEquals(Long.toString(Long.MAX_VALUE),
                    config(admin, KafkaLog.HEARTBEATS, "flush.messages"), "heartbeats are left to the page cache");
        }
        try (EmbeddedKafka k = EmbeddedKafka.start(tmp.resolve("older"));
             Admin admin = admin(k)) {
            admin.createTopics(List.of(new NewTopic(KafkaLog.EVENTS, 8, (short) 1),
                    new NewTopic(KafkaLog.COMMANDS, 8, (short) 1))).all()
                            .get(30, TimeUnit.SECONDS);
            Assertions.assertEquals(Long.toString(Long.MAX_VALUE),
                    config(admin, KafkaLog.EVENTS, "flush.messages"));
            try (KafkaLog log = new KafkaLog(k.bootstrapServers(), KafkaClientSettings.NONE, LogSettings.EMBEDDED)) {
                // altered through the controller: the broker's own view of the topic follows a moment later
                Assertions.assertEquals("1",
                        settled(admin, KafkaLog.EVENTS, "flush.messages", "1"));
                Assertions.assertEquals("1",
                        settled(admin, KafkaLog.COMMANDS, "flush.messages", "1"));
            }
        }
    }

    /** {@code key}'s value once it reads {@code wanted}, or what it reads after 30 s. */
    private static String settled(Admin admin, String topic, String key, String wanted) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        String v = config(admin, topic, key);
        while (!wanted.equals(v) && System.nanoTime() < deadline) {
            Thread.sleep(100);
            v = config(admin, topic, key);
        }
        return v;
    }

    /**
     * {@code key}'s value for {@code topic}. A topic just created is known to the controller before the broker
     * serves its configuration (a rehearsal, 2026-12-01: UnknownTopicOrPartitionException right after
     * createTopics): asked again for up to 30 s.
     */
    private static String config(Admin admin, String topic, String key) throws Exception {
        ConfigResource r = new ConfigResource(
                ConfigResource.Type.TOPIC, topic);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                return admin.describeConfigs(List.of(r)).all().get(30, TimeUnit.SECONDS).get(r).get(key).value();
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof UnknownTopicOrPartitionException) || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(100);
            }
        }
    }

    /** Issue 40, point 6: heartbeats (17 million a day at 1,000 nodes) expire instead of joining the history. */
    private static void assertExpires(Admin admin, String topic) throws Exception {
        ConfigResource r = new ConfigResource(
                ConfigResource.Type.TOPIC, topic);
        Config c = admin.describeConfigs(List.of(r)).all().get(30, TimeUnit.SECONDS)
                .get(r);
        Assertions.assertEquals("delete", c.get("cleanup.policy").value(), topic);
        Assertions.assertEquals("3600000", c.get("retention.ms").value(), topic);
        Assertions.assertEquals("600000", c.get("segment.ms").value(),
                topic + ": a segment is deleted whole");
    }

    /**
     * Every way an event is written (append, offer, appendPatiently) puts a heartbeat in the heartbeats topic, the rest
     * in events.
     */
    @Test
    void heartbeatsGoToTheirOwnTopicAndEveryOtherEventToTheEvents() throws Exception {
        try (EmbeddedKafka k = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(k.bootstrapServers(), KafkaClientSettings.NONE, LogSettings.EMBEDDED)) {
            log.append(new Event.Heartbeat("j", "n1"));
            log.offer(new Event.Heartbeat("j", "n2"));
            log.appendPatiently(new Event.Heartbeat("j", "n3"), () -> true);
            log.append(new Event.Heartbeat("j", Event.Heartbeat.LAUNCHER));
            log.append(new Event.JobFinished("j", true, "done"));
            log.offer(new Event.CaptureFailed("j", 0, "no"));
            log.appendPatiently(new Event.CaptureFailed("j", 1, "no"), () -> true);
            Assertions.assertEquals(4, records(log, KafkaLog.HEARTBEATS), "heartbeats");
            Assertions.assertEquals(3, records(log, KafkaLog.EVENTS),
                    "events: no heartbeat among them");
        }
    }

    /** What `ferry run` folds: the whole history, and the heartbeats sent since it began, not those before. */
    @Test
    void aWatchReadsTheWholeHistoryAndOnlyTheHeartbeatsSentSinceItBegan() throws Exception {
        try (EmbeddedKafka k = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(k.bootstrapServers(), KafkaClientSettings.NONE, LogSettings.EMBEDDED)) {
            log.append(new Event.CaptureFailed("j", 0, "before"));
            log.append(new Event.Heartbeat("j", "before"));
            List<Event> read = new ArrayList<>();
            try (var c = log.historyAndHeartbeats()) {
                log.append(new Event.Heartbeat("j", "after"));
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (read.size() < 2 && System.nanoTime() < deadline) {
                    c.poll(Duration.ofMillis(200))
                            .forEach(r -> read.add(EventCodec.decode(r.value())));
                }
                c.poll(Duration.ofMillis(500))
                        .forEach(r -> read.add(EventCodec.decode(r.value())));
            }
            Assertions.assertEquals(
                    Set.of(new Event.CaptureFailed("j", 0, "before"),
                    new Event.Heartbeat("j", "after")), Set.copyOf(read), read.toString());
            Assertions.assertEquals(2, read.size(), read.toString());
        }
    }

    /** How many records {@code topic} holds (waiting for an offer sent without waiting). */
    private static long records(KafkaLog log, String topic) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        long n;
        try (var c = log.reader(topic, true)) {
            do {
                n = KafkaLog.ends(c).values().stream().mapToLong(Long::longValue).sum();
                if (n >= (topic.equals(KafkaLog.HEARTBEATS) ? 4 : 3)) {
                    break;
                }
                Thread.sleep(100);
            } while (System.nanoTime() < deadline);
        }
        return n;
    }

    /**
     * Topics a site made itself are checked: a retention or compaction that would drop the coordinator's events is
     * said.
     */
    @Test
    void anEventsTopicMadeWithAFiniteRetentionOrCompactionIsNamed() throws Exception {
        try (EmbeddedKafka k = EmbeddedKafka.start(tmp.resolve("kafka"));
             Admin admin = admin(k)) {
            admin.createTopics(List.of(
                    new NewTopic(KafkaLog.EVENTS, 8, (short) 1)
                            .configs(Map.of("retention.ms", "604800000", "cleanup.policy", "compact")),
                    new NewTopic(KafkaLog.COMMANDS, 8, (short) 1),
                    new NewTopic(KafkaLog.STATE, 8, (short) 1),
                    new NewTopic(KafkaLog.DEAD_LETTER, 1, (short) 1))).all()
                            .get(30, TimeUnit.SECONDS);
            try (KafkaLog log = new KafkaLog(k.bootstrapServers())) {
                List<String> problems = log.retentionProblems();
                Assertions.assertEquals(2, problems.size(), problems.toString());
                Assertions.assertTrue(problems.get(0).contains("retention.ms=604800000")
                        && problems.get(0).contains("--add-config retention.ms=-1"), problems.get(0));
                Assertions.assertTrue(problems.get(1).contains("cleanup.policy=compact"),
                        problems.get(1));
                Assertions.assertEquals(problems.subList(0, 1), log.eventRetention(),
                        "a retention, which snapshots may cover");
                Assertions.assertEquals(problems.subList(1, 2), log.eventCompaction(),
                        "compaction, which nothing covers");
                // A log made before the heartbeats topic (an older Ferry, or a site's four topics) gets it beside them.
                try (Admin again = admin(k)) {
                    assertExpires(again, KafkaLog.HEARTBEATS);
                }
            }
        }
        try (EmbeddedKafka k = EmbeddedKafka.start(tmp.resolve("kafka2"));
             KafkaLog made = new KafkaLog(k.bootstrapServers(), KafkaClientSettings.NONE, LogSettings.EMBEDDED);
             KafkaLog again = new KafkaLog(k.bootstrapServers(), KafkaClientSettings.NONE, LogSettings.EMBEDDED)) {
            Assertions.assertEquals(List.of(), again.retentionProblems(),
                    "Ferry's own topics keep everything");
        }
    }

    /** A site's heartbeats topic that keeps everything costs disk, not events: named, but no event loss. */
    @Test
    void aHeartbeatsTopicKeptForeverIsNamedButLosesNoEvents() throws Exception {
        try (EmbeddedKafka k = EmbeddedKafka.start(tmp.resolve("kafka"));
             Admin admin = admin(k)) {
            Map<String, String> forever = Map.of("retention.ms", "-1", "retention.bytes", "-1");
            admin.createTopics(List.of(new NewTopic(KafkaLog.EVENTS, 8, (short) 1).configs(forever),
                    new NewTopic(KafkaLog.COMMANDS, 8, (short) 1).configs(forever),
                    new NewTopic(KafkaLog.STATE, 8, (short) 1).configs(Map.of("cleanup.policy", "compact")),
                    new NewTopic(KafkaLog.DEAD_LETTER, 1, (short) 1).configs(forever),
                    new NewTopic(KafkaLog.HEARTBEATS, 8, (short) 1).configs(forever))).all().get(30, TimeUnit.SECONDS);
            try (KafkaLog log = new KafkaLog(k.bootstrapServers())) {
                List<String> problems = log.retentionProblems();
                Assertions.assertEquals(1, problems.size(), problems.toString());
                assertTrue(problems.get(0).contains("topic ferry.heartbeats keeps heartbeats for ever")
                        && problems.get(0).contains("--add-config retention.ms=3600000,segment.ms=600000"),
                        problems.get(0));
                Assertions.assertEquals(List.of(), log.eventRetention());
                Assertions.assertEquals(List.of(), log.eventCompaction());
            }
        }
    }

    /** An admin client of {@code k}, logged in as its own user on loopback. */
    static Admin admin(EmbeddedKafka k) {
        Map<String, Object> config = new HashMap<>(k.login().settings());
        config.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, k.bootstrapServers());
        return Admin.create(config);
    }
}
