package io.ferry.coordinator;

import io.ferry.eventlog.EmbeddedKafka;
import io.ferry.eventlog.KafkaLog;
import io.ferry.eventlog.LoopbackLogin;
import io.ferry.model.Event;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.ferry.coordinator.SnapshotStartIT.JOB;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A coordinator on an events topic that lost its oldest events ({@link EventsCoverage}): it starts
 * where each thinned partition's snapshot still reaches the partition's log start, and folds the
 * state a replay of the whole history gives; where a partition lost events no snapshot covers, it
 * refuses, naming the partition and the offsets. A finite retention is said when snapshots are on,
 * refused when they are off; compaction is refused. Real broker, real coordinators; partitions are
 * thinned for real, with the Admin API's {@code deleteRecords}, as a retention thins them.
 */
class ThinnedEventsIT {
    @TempDir
    Path tmp;

    @Test
    void aThinnedPartitionThatASnapshotCoversStartsAndReachesTheWholeHistorysState() throws Exception {
        try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
             Admin admin = admin(kafka)) {
            // A site's topic, with a week's retention: deleteRecords below does what the week would.
            admin.createTopics(List.of(new NewTopic(KafkaLog.EVENTS, 8, (short) 1)
                    .configs(Map.of("retention.ms", "604800000")))).all().get(30, TimeUnit.SECONDS);
            try (KafkaLog log = new KafkaLog(kafka.bootstrapServers())) {
                coveredStart(log, admin);
            }
        }
    }

    private static void coveredStart(KafkaLog log, Admin admin) throws Exception {
        Snapshotted snap = snapshotted(log);
        SnapshotTopic.Index ix = snap.index();
        TopicPartition tp = snap.partition();
        log.append(new Event.CacheReported(JOB, "n1", 1 << 30, 1 << 29, 1 << 20, 3, 2));
        log.append(new Event.PeerAddress(JOB, "n2", "10.0.0.2:7000"));
        byte[] whole = SnapshotStartIT.heardAtZero(FoldSnapshot.encode(
                List.of(SnapshotStartIT.wholeFold(log).get(JOB).orElseThrow())));
        // Everything before the record the snapshot folded last is deleted: the snapshot still reaches it.
        thin(admin, tp, ix.lastOffset());
        String said = SnapshotStartIT.stderrOf(() -> {
            try (Coordinator second = new Coordinator(log, Clock.systemUTC()).start()) {
                assertTrue(second.awaitLive(Duration.ofSeconds(60)));
                assertEquals(2, second.foldedEvents(), "only the two events after the snapshot are replayed");
                byte[] started = second.query(j -> FoldSnapshot.encode(List.of(j.get(JOB).orElseThrow())));
                assertArrayEquals(whole, SnapshotStartIT.heardAtZero(started),
                        "the snapshot and what is left fold to what the whole history folded to");
                assertEquals(20, (int) second.query(j -> j.get(JOB).orElseThrow().generations().size()));
            }
        });
        assertTrue(said.contains("events partition " + tp.partition() + " starts at offset " + ix.lastOffset())
                && said.contains("covers what was deleted"), said);
        assertTrue(said.contains("finite retention (topic ferry.events has retention.ms=604800000"), said);
    }

    @Test
    void aThinnedPartitionThatNoSnapshotCoversIsRefusedNamingWhatItLost() throws Exception {
        try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(kafka.bootstrapServers());
             Admin admin = admin(kafka)) {
            Snapshotted snap = snapshotted(log);
            SnapshotTopic.Index ix = snap.index();
            TopicPartition tp = snap.partition();
            for (int i = 0; i < 5; i++) {
                log.append(new Event.CacheReported(JOB, "n1", 1 << 30, 1 << 29, 1 << 20, 3, 2));
            }
            long start = ix.lastOffset() + 3; // the record the snapshot folded last, and two after it, deleted
            thin(admin, tp, start);
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> new Coordinator(log, Clock.systemUTC()).start());
            assertTrue(e.getMessage().contains("will not start") && e.getMessage().contains("events partition "
                    + tp.partition() + " lost offsets 0 to " + (start - 1) + " (its log start offset is " + start + ")")
                    && e.getMessage().contains("no snapshot covers them")
                    && e.getMessage().contains("no longer holds offset " + ix.lastOffset()), e.getMessage());
        }
    }

    @Test
    void aThinnedPartitionWithoutAnySnapshotIsRefused() throws Exception {
        try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(kafka.bootstrapServers());
             Admin admin = admin(kafka)) {
            SnapshotStartIT.history(log, 0, 2);
            TopicPartition tp = holding(log);
            thin(admin, tp, 1); // the job's start, gone
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> new Coordinator(log, Clock.systemUTC()).start());
            assertTrue(e.getMessage().contains("events partition " + tp.partition() + " lost offsets 0 to 0")
                    && e.getMessage().contains("it has no snapshot"), e.getMessage());
        }
    }

    @Test
    void aFiniteRetentionIsSaidWithSnapshotsRefusedWithoutAndCompactionAlwaysRefused() throws Exception {
        try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"))) {
            try (Admin admin = admin(kafka)) {
                admin.createTopics(List.of(new NewTopic(KafkaLog.EVENTS, 8, (short) 1)
                        .configs(Map.of("retention.ms", "604800000")))).all().get(30, TimeUnit.SECONDS);
            }
            try (KafkaLog log = new KafkaLog(kafka.bootstrapServers())) {
                // Nothing deleted yet, snapshots on: it starts, saying what the retention asks of the snapshots.
                String said = SnapshotStartIT.stderrOf(() -> {
                    try (Coordinator c = new Coordinator(log, Clock.systemUTC()).start()) {
                        assertTrue(c.awaitLive(Duration.ofSeconds(60)));
                    }
                });
                assertTrue(said.contains("finite retention") && said.contains("retention.ms=604800000")
                        && said.contains("coordinator.snapshot-every"), said);
                IllegalStateException off = assertThrows(IllegalStateException.class,
                        () -> new Coordinator(log, Clock.systemUTC()).snapshotEvery(0).start());
                assertTrue(off.getMessage().contains("will not start")
                        && off.getMessage().contains("retention.ms=604800000")
                        && off.getMessage().contains("--add-config retention.ms=-1")
                        && off.getMessage().contains("coordinator.snapshot-every=0"), off.getMessage());
            }
            try (Admin admin = admin(kafka)) {
                ConfigResource events = new ConfigResource(ConfigResource.Type.TOPIC, KafkaLog.EVENTS);
                admin.incrementalAlterConfigs(Map.of(events, List.of(new AlterConfigOp(
                        new ConfigEntry("cleanup.policy", "compact"), AlterConfigOp.OpType.SET)))).all()
                                .get(30, TimeUnit.SECONDS);
            }
            try (KafkaLog log = new KafkaLog(kafka.bootstrapServers())) {
                IllegalStateException e = assertThrows(IllegalStateException.class,
                        () -> new Coordinator(log, Clock.systemUTC()).start());
                assertTrue(e.getMessage().contains("will not start")
                        && e.getMessage().contains("cleanup.policy=compact"), e.getMessage());
            }
        }
    }

    private static Admin admin(EmbeddedKafka kafka) {
        return Admin.create(LoopbackLogin.clientConfig(kafka.bootstrapServers(),
                Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers())));
    }

    /**
     * Deletes the records of {@code tp} before {@code offset}, as a retention would: its log start becomes
     * {@code offset}.
     */
    private static void thin(Admin admin, TopicPartition tp, long offset) throws Exception {
        long start = admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(offset))).lowWatermarks().get(tp)
                .get(30, TimeUnit.SECONDS).lowWatermark();
        assertEquals(offset, start);
    }

    /** The one events partition that holds records (the job's). */
    private static TopicPartition holding(KafkaLog log) {
        try (var c = log.reader(KafkaLog.EVENTS, true)) {
            return KafkaLog.ends(c).entrySet().stream().filter(e -> e.getValue() > 0).map(Map.Entry::getKey)
                    .findFirst().orElseThrow();
        }
    }

    /** The partition holding the job and the index of the snapshot a coordinator wrote of it. */
    private record Snapshotted(TopicPartition partition, SnapshotTopic.Index index) {}

    /** Twenty generations of history, and a coordinator that snapshots them (every 50 events) and stops. */
    private static Snapshotted snapshotted(KafkaLog log) throws Exception {
        SnapshotStartIT.history(log, 0, 20);
        try (Coordinator first = new Coordinator(log, Clock.systemUTC()).snapshotEvery(50).start()) {
            assertTrue(first.awaitLive(Duration.ofSeconds(60)));
            TopicPartition tp = partitionOf(SnapshotStartIT.awaitIndex(log));
            return new Snapshotted(tp, index(log, tp));
        }
    }

    private static TopicPartition partitionOf(String indexKey) {
        return new TopicPartition(KafkaLog.EVENTS, Integer.parseInt(indexKey.substring("events-".length())));
    }

    /** The newest snapshot index of {@code tp} on the snapshots topic. */
    private static SnapshotTopic.Index index(KafkaLog log, TopicPartition tp) {
        SnapshotTopic.Index found = null;
        try (var c = log.reader(KafkaLog.SNAPSHOTS, true)) {
            var ends = KafkaLog.ends(c);
            while (!KafkaLog.reached(c, ends)) {
                for (var r : c.poll(Duration.ofMillis(200))) {
                    if (r.value() != null
                            && ("events-" + tp.partition()).equals(new String(r.key(), StandardCharsets.UTF_8))) {
                        found = SnapshotTopic.Index.parse(new String(r.value(), StandardCharsets.UTF_8));
                    }
                }
            }
        }
        assertTrue(found != null, "no snapshot index of " + tp);
        return found;
    }
}
