package io.ferry.coordinator;

import io.ferry.eventlog.EmbeddedKafka;
import io.ferry.eventlog.KafkaLog;
import io.ferry.model.Event;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code coordinator.snapshot-every} sets how many events of a partition a coordinator folds
 * between two snapshots: given 10, it writes its first snapshot once the tenth event is folded,
 * not before, and the next after ten more. Real broker, real coordinator; the snapshots are read
 * back from {@code ferry.snapshots} in the order they were written.
 */
class SnapshotEveryIT {
    private static final String JOB = "counted";

    @TempDir
    Path tmp;

    @Test
    void aCoordinatorGivenTenEventsSnapshotsAfterEachTenEvents() throws Exception {
        CoordinatorSettings settings = CoordinatorSettings.of(Map.of("coordinator.snapshot-every", "10"));
        try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(kafka.bootstrapServers())) {
            // Logged before the coordinator starts: it replays a job that already finished, and places nothing (live,
            // it could log the start's placement between the two, an eleventh event).
            log.append(new Event.JobStarted(JOB, 1, 0, false, "file:/nowhere", "n0"));
            log.append(new Event.JobFinished(JOB, true, "done"));
            try (Coordinator c = new Coordinator(log, Clock.systemUTC()).configured(settings).start()) {
                assertTrue(c.awaitLive(Duration.ofSeconds(60)));
                counts(log, c);
            }
        }
    }

    private static void counts(KafkaLog log, Coordinator c) throws InterruptedException {
        reports(log, 7);
        awaitFolded(c, 9); // nine events: one short of a snapshot
        reports(log, 1);
        List<Long> lasts = awaitIndexes(log, 1);
        assertEquals(List.of(9L), lasts, "the first snapshot folds the first ten events (offsets 0 to 9)");
        reports(log, 10);
        assertEquals(List.of(9L, 19L), awaitIndexes(log, 2), "the next one ten events later");
    }

    /** Reports that decide nothing for a finished job: folded, nothing reacted to. */
    private static void reports(KafkaLog log, int n) {
        for (int i = 0; i < n; i++) {
            log.append(new Event.CacheReported(JOB, "n0", 1 << 30, 1 << 29, 1 << 20, 1, 1));
        }
    }

    private static void awaitFolded(Coordinator c, long n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (c.foldedEvents() < n) {
            assertTrue(System.nanoTime() < deadline, "folded " + c.foldedEvents() + " of " + n + " events in 60 s");
            TimeUnit.MILLISECONDS.sleep(20);
        }
        assertEquals(n, c.foldedEvents());
    }

    /**
     * The offsets the snapshot indexes on the snapshots topic name as folded last, oldest first, once there are
     * {@code n}.
     */
    private static List<Long> awaitIndexes(KafkaLog log, int n) {
        List<Long> lasts = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        try (KafkaConsumer<byte[], byte[]> r = log.reader(KafkaLog.SNAPSHOTS, true)) {
            while (lasts.size() < n && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> rec : r.poll(Duration.ofMillis(200))) {
                    String key = rec.key() == null ? "" : new String(rec.key(), StandardCharsets.UTF_8);
                    if (key.startsWith("events-") && !key.contains("/") && rec.value() != null) {
                        lasts.add(SnapshotTopic.Index.parse(new String(rec.value(), StandardCharsets.UTF_8))
                                .lastOffset());
                    }
                }
            }
        }
        assertEquals(n, lasts.size(), "snapshot indexes written within 60 s: " + lasts);
        return lasts;
    }
}
