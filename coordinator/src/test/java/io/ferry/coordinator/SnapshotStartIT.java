package io.ferry.coordinator;

import io.ferry.eventlog.EmbeddedKafka;
import io.ferry.eventlog.KafkaLog;
import io.ferry.eventlog.LoopbackLogin;
import io.ferry.model.Event;
import io.ferry.model.EventCodec;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A coordinator starts from the snapshot another left ({@link SnapshotTopic}) and replays only the
 * events after it, reaching the state a replay of the whole history gives; a snapshot that no
 * longer matches the log (the events topic made again) or that cannot be read is passed over,
 * said, and the history replayed whole. Real broker, real coordinators; the state compared is
 * the test's own fold of the events topic, record by record, with the records' times, which is
 * what a replay from offset 0 folds.
 */
class SnapshotStartIT {
    static final String JOB = "long";

    @TempDir
    Path tmp;

    @Test
    void aRestartReplaysOnlyWhatCameAfterTheSnapshot() throws Exception {
        try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(kafka.bootstrapServers())) {
            int history = history(log, 0, 30);
            try (Coordinator first = new Coordinator(log, Clock.systemUTC()).snapshotEvery(100).start()) {
                assertTrue(first.awaitLive(Duration.ofSeconds(60)));
                assertEquals(history, first.foldedEvents(), "the first start replays the whole history");
                awaitIndex(log);
            }
            // Nothing after the snapshot: the partition is live at once, and its jobs are judged afresh as
            // after a replay (each node a whole heartbeat timeout from now), not by the times in the snapshot.
            long before = System.currentTimeMillis();
            try (Coordinator atOnce = new Coordinator(log, Clock.systemUTC()).snapshotEvery(0).start()) {
                assertTrue(atOnce.awaitLive(Duration.ofSeconds(60)));
                assertEquals(0, atOnce.foldedEvents(), "nothing to replay after the snapshot");
                boolean afresh = atOnce.query(j -> j.get(JOB).orElseThrow().heartbeats.values().stream()
                        .allMatch(t -> t >= before));
                assertTrue(afresh, "the nodes are heard afresh from the start");
            }
            // The tail: what came after the snapshot (reports that decide nothing for a finished job).
            log.append(new Event.CacheReported(JOB, "n1", 1 << 30, 1 << 29, 1 << 20, 3, 2));
            log.append(new Event.PeerAddress(JOB, "n2", "10.0.0.2:7000"));
            log.append(new Event.StoreHealthReported(JOB, "n0", "s3://b", "CLOSED", 10, 1, 0, 0));

            try (Coordinator second = new Coordinator(log, Clock.systemUTC()).snapshotEvery(0).start()) {
                assertTrue(second.awaitLive(Duration.ofSeconds(60)));
                assertEquals(3, second.foldedEvents(), "only the three events after the snapshot are replayed");
                byte[] started = second.query(j -> FoldSnapshot.encode(List.of(j.get(JOB).orElseThrow())));
                assertArrayEquals(heardAtZero(FoldSnapshot.encode(List.of(wholeFold(log).get(JOB).orElseThrow()))),
                        heardAtZero(started), "the snapshot and the tail fold to what the whole history folds to");
                assertEquals(30, (int) second.query(j -> j.get(JOB).orElseThrow().generations().size()));
            }
        }
    }

    @Test
    void aSnapshotThatNoLongerMatchesTheLogIsPassedOver() throws Exception {
        try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(kafka.bootstrapServers())) {
            history(log, 0, 20);
            try (Coordinator first = new Coordinator(log, Clock.systemUTC()).snapshotEvery(50).start()) {
                assertTrue(first.awaitLive(Duration.ofSeconds(60)));
                awaitIndex(log);
            }
            // The events topic made again (an operator's reset): the same offsets now hold other records.
            try (Admin admin = Admin.create(LoopbackLogin.clientConfig(kafka.bootstrapServers(),
                    Map.of("bootstrap.servers", kafka.bootstrapServers())))) {
                admin.deleteTopics(List.of(KafkaLog.EVENTS)).all().get(30, TimeUnit.SECONDS);
            }
            Thread.sleep(1000); // KRaft completes a deletion asynchronously; the next KafkaLog makes the topic anew
            try (KafkaLog again = new KafkaLog(kafka.bootstrapServers())) {
                int history = history(again, 100, 25);
                String said = stderrOf(() -> {
                    try (Coordinator second = new Coordinator(again, Clock.systemUTC()).snapshotEvery(0).start()) {
                        assertTrue(second.awaitLive(Duration.ofSeconds(60)));
                        assertEquals(history, second.foldedEvents(), "the whole new history is replayed");
                        assertEquals(25, (int) second.query(j -> j.get(JOB).orElseThrow().generations().size()),
                                "nothing of the old snapshot's state");
                    }
                });
                assertTrue(said.contains("cannot be used") && said.contains("replaying its whole history"), said);
            }
        }
    }

    @Test
    void aDamagedIndexCostsAReplayNotAState() throws Exception {
        try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(kafka.bootstrapServers())) {
            int history = history(log, 0, 20);
            String key;
            try (Coordinator first = new Coordinator(log, Clock.systemUTC()).snapshotEvery(50).start()) {
                assertTrue(first.awaitLive(Duration.ofSeconds(60)));
                key = awaitIndex(log);
            }
            log.sendRaw(KafkaLog.SNAPSHOTS, key, "version=1 id=x pieces=oops".getBytes(StandardCharsets.UTF_8));
            String said = stderrOf(() -> {
                try (Coordinator second = new Coordinator(log, Clock.systemUTC()).snapshotEvery(0).start()) {
                    assertTrue(second.awaitLive(Duration.ofSeconds(60)));
                    assertEquals(history, second.foldedEvents());
                    byte[] started = second.query(j -> FoldSnapshot.encode(List.of(j.get(JOB).orElseThrow())));
                    assertArrayEquals(heardAtZero(FoldSnapshot.encode(List.of(wholeFold(log).get(JOB).orElseThrow()))),
                            heardAtZero(started));
                }
            });
            assertTrue(said.contains("malformed index"), said);
        }
    }

    /** Writes a finished job of {@code generations} established generations (3 ranks); returns the events written. */
    static int history(KafkaLog log, long firstGeneration, int generations) {
        int n = 0;
        log.append(new Event.JobStarted(JOB, 3, 0, false, "file:/nowhere", "n0"));
        n++;
        for (long g = firstGeneration; g < firstGeneration + generations; g++) {
            log.append(new Event.CheckpointRequested(JOB, g, "interval"));
            n++;
            for (int r = 0; r < 3; r++) {
                log.append(new Event.ImageCaptured(JOB, g, r, "n" + r, 1000 + g, 0.1 * (r + 1)));
                log.append(new Event.ImageStaged(JOB, g, r, "remote", 1000 + g, 400, 0.2));
                n += 2;
            }
            log.append(new Event.SnapshotEstablished(JOB, g, "remote", 1.5));
            n++;
        }
        log.append(new Event.JobFinished(JOB, true, "done"));
        return n + 1;
    }

    /** Waits for a snapshot index on the snapshots topic; returns its key. */
    static String awaitIndex(KafkaLog log) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        try (KafkaConsumer<byte[], byte[]> c = log.reader(KafkaLog.SNAPSHOTS, true)) {
            while (System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    String key = r.key() == null ? "" : new String(r.key(), StandardCharsets.UTF_8);
                    if (key.startsWith("events-") && !key.contains("/") && r.value() != null) {
                        return key;
                    }
                }
            }
        }
        throw new AssertionError("no snapshot index written within 60 s");
    }

    /** The events topic folded from offset 0 with each record's time: what a replay of the whole history gives. */
    static Jobs wholeFold(KafkaLog log) {
        Jobs jobs = new Jobs();
        try (KafkaConsumer<byte[], byte[]> c = log.reader(KafkaLog.EVENTS, true)) {
            Map<TopicPartition, Long> ends = c.endOffsets(c.assignment());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (ends.entrySet().stream().anyMatch(e -> c.position(e.getKey()) < e.getValue())) {
                assertTrue(System.nanoTime() < deadline, "reading the events topic took over 60 s");
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    jobs.apply(EventCodec.decode(r.value()), r.timestamp());
                }
            }
        }
        return jobs;
    }

    /**
     * The state with its nodes' last-heard times set to 0: a coordinator re-arms them on its own
     * clock when a replay ends ({@link JobView#heardAllAt}), so they are the one thing a coordinator's
     * state holds that the fold of the records does not.
     */
    static byte[] heardAtZero(byte[] state) {
        List<JobView> jobs = FoldSnapshot.decode(state);
        jobs.forEach(j -> {
            j.heartbeats.replaceAll((node, t) -> 0L);
            j.launcherSeenMillis = 0;
        });
        return FoldSnapshot.encode(jobs);
    }

    interface Work {
        void run() throws Exception;
    }

    static String stderrOf(Work work) throws Exception {
        PrintStream was = System.err;
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        try (PrintStream tee = new PrintStream(got, true, StandardCharsets.UTF_8)) {
            System.setErr(tee);
            work.run();
        } finally {
            System.setErr(was);
        }
        return got.toString(StandardCharsets.UTF_8);
    }
}
