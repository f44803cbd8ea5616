package io.ferry.coordinator;

import io.ferry.eventlog.KafkaLog;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Whether what the events topic still holds, with the snapshots of its fold, is the whole of what
 * a coordinator folds. Its state is a fold over every partition from offset 0; one folded from
 * what a retention (or an operator's {@code deleteRecords}) left would decide on a job's tail: its
 * start, placement or established generations gone. So a partition whose log start offset is
 * above 0 must have a usable snapshot that folded at least up to that offset (the record it folded
 * last still there: {@link SnapshotTopic#reach}); compaction, which keeps one event per job
 * anywhere in the topic, is never covered. Checked once, at a coordinator's start, over every
 * partition (any may be taken over later). Called before the coordinator's thread starts.
 */
final class EventsCoverage {
    private EventsCoverage() {}

    /** Throws {@link IllegalStateException} naming the {@link #refusals}, if any. */
    static void require(KafkaLog log, SnapshotTopic snapshots, long snapshotEvery, String who) {
        List<String> loss = refusals(log, snapshots, snapshotEvery, who);
        if (!loss.isEmpty()) {
            throw new IllegalStateException("the coordinator will not start on an events topic that drops events"
                    + " no snapshot covers: " + String.join("; ", loss));
        }
    }

    /**
     * Why a coordinator must not start on {@code log}'s events topic (empty: it may), each reason
     * naming the partition and the offsets lost; where it may although the topic has a finite
     * retention, a warning is said on standard error. {@code snapshotEvery}: this coordinator's
     * interval (0: it writes none, so nothing would cover what a retention deletes from its partitions).
     */
    static List<String> refusals(KafkaLog log, SnapshotTopic snapshots, long snapshotEvery, String who) {
        if (!log.eventCompaction().isEmpty()) {
            return log.eventCompaction();
        }
        List<String> retention = log.eventRetention();
        if (!retention.isEmpty() && snapshotEvery == 0) {
            List<String> out = new ArrayList<>(retention);
            out.add("this coordinator writes no snapshots (" + CoordinatorSettings.SNAPSHOT_EVERY.name() + "=0), so"
                    + " nothing would cover what the retention deletes");
            return List.copyOf(out);
        }
        Map<TopicPartition, Long> starts = thinned(log);
        List<String> out = new ArrayList<>();
        if (!starts.isEmpty()) {
            Map<Integer, SnapshotTopic.Reach> reach = snapshots.reach(starts.keySet());
            starts.forEach((tp, start) -> {
                SnapshotTopic.Reach r = reach.get(tp.partition());
                if (r.lastOffset() < start) {
                    out.add("events partition " + tp.partition() + " lost offsets 0 to " + (start - 1)
                            + " (its log start" + " offset is " + start + ") and no snapshot covers them ("
                            + (r.lastOffset() < 0 ? r.why() : "its snapshot folded up to offset " + r.lastOffset())
                            + "): its jobs would be folded from a tail");
                } else {
                    System.err.println("ferry coordinator " + who + ": events partition " + tp.partition()
                            + " starts at"
                            + " offset " + start + "; its snapshot, folded up to offset " + r.lastOffset() + ", covers"
                            + " what was deleted");
                }
            });
        }
        if (out.isEmpty() && !retention.isEmpty()) {
            System.err.println("ferry coordinator " + who + ": starting on " + KafkaLog.EVENTS + " although it has a"
                    + " finite retention (" + String.join("; ", retention) + "): its snapshots cover what it deleted so"
                    + " far. Each partition must be snapshotted (every " + snapshotEvery + " events, "
                    + CoordinatorSettings.SNAPSHOT_EVERY.name() + ") well before the retention deletes what its newest"
                    + " snapshot folded last, or the next start is refused: keep the snapshot interval shorter than"
                    + " what the retention keeps of a partition, or keep the topic for ever");
        }
        return List.copyOf(out);
    }

    /** Each events partition whose log start offset is above 0, with that offset. */
    private static Map<TopicPartition, Long> thinned(KafkaLog log) {
        Map<TopicPartition, Long> out = new TreeMap<>(Comparator.comparingInt(TopicPartition::partition));
        try (KafkaConsumer<byte[], byte[]> c = log.reader(KafkaLog.EVENTS, true)) {
            c.beginningOffsets(c.assignment()).forEach((tp, start) -> {
                if (start > 0) {
                    out.put(tp, start);
                }
            });
        }
        return out;
    }
}
