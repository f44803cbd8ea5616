package io.ferry.coordinator;

import io.ferry.eventlog.KafkaLog;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * Which jobs this coordinator owns. Coordinators of one Kafka consumer group share the events
 * topic by partition, and so the jobs (events are keyed by job). A partition taken on (at
 * start, or from a coordinator that left or died) is replayed from its beginning before
 * anything is decided for its jobs: a job is live once its partition is caught up to where it
 * ended when it was taken on. A partition given up drops its jobs from the fold. Called on the
 * coordinator thread only (Kafka calls the listener inside poll).
 */
final class Ownership implements ConsumerRebalanceListener {
    private final String who;
    private final Consumer<Set<String>> drop;
    private KafkaConsumer<byte[], byte[]> events;
    /** Each owned partition's end offset when it was taken on: records before it are a replay. */
    private final Map<TopicPartition, Long> replayUntil = new HashMap<>();
    /** Owned partitions still replaying. */
    private final Set<Integer> replaying = new HashSet<>();
    /**
     * Partitions taken on from a snapshot with nothing after it to replay: live at once, and their
     * jobs reported by the next {@link #advance()} as a replay's end is (liveness re-armed, stores listed).
     */
    private final Set<Integer> liveFromSnapshot = new HashSet<>();
    private final Map<String, Integer> partitionOf = new HashMap<>();
    private boolean assignedOnce;
    private volatile boolean closing;
    private SnapshotKeeper snapshots;
    private Consumer<JobView> install = j -> { };

    /** @param drop called with the jobs of partitions given up: forget them */
    Ownership(String who, Consumer<Set<String>> drop) {
        this.who = who;
        this.drop = drop;
    }

    /** Before the consumer is closed: the partitions it hands back are not given up job by job. */
    void closing() {
        closing = true;
    }

    void attach(KafkaConsumer<byte[], byte[]> consumer) {
        this.events = consumer;
    }

    /** Partitions taken on start from their snapshots in {@code keeper}, whose jobs go to {@code install}. */
    void startFrom(SnapshotKeeper keeper, Consumer<JobView> install) {
        this.snapshots = keeper;
        this.install = install;
    }

    @Override
    public void onPartitionsAssigned(Collection<TopicPartition> parts) {
        assignedOnce = true;
        if (parts.isEmpty()) {
            return;
        }
        Map<TopicPartition, SnapshotKeeper.Started> started = snapshots == null ? Map.of()
                : snapshots.resume(parts, install);
        Map<TopicPartition, Long> ends = events.endOffsets(parts);
        replayUntil.putAll(ends);
        saySnapshotlessThinned(parts.stream().filter(tp -> !started.containsKey(tp)).toList());
        long skipped = 0;
        for (TopicPartition tp : parts) {
            SnapshotKeeper.Started s = started.get(tp);
            long from = 0;
            if (s == null) {
                events.seekToBeginning(List.of(tp));
            } else { // its snapshot's jobs are installed: only what came after the snapshot is replayed
                from = s.nextOffset();
                skipped += from;
                events.seek(tp, from);
                s.jobs().forEach(job -> partitionOf.put(job, tp.partition()));
            }
            if (ends.getOrDefault(tp, 0L) > from) {
                replaying.add(tp.partition());
            } else if (s != null) {
                liveFromSnapshot.add(tp.partition());
            }
        }
        System.err.println("ferry coordinator " + who + ": took on events partitions " + numbers(parts)
                + " (replaying their jobs before acting on them" + (started.isEmpty() ? ")"
                : "; " + started.size() + " from a snapshot, " + skipped + " events not replayed)"));
    }

    /**
     * A partition taken on without a snapshot while its oldest events are deleted: a start refuses
     * that ({@link EventsCoverage}), but a retention may delete them, and a snapshot be lost, while
     * coordinators run. Its jobs are folded from a tail; said loudly, the other jobs carry on.
     */
    private void saySnapshotlessThinned(List<TopicPartition> parts) {
        if (parts.isEmpty()) {
            return;
        }
        events.beginningOffsets(parts).forEach((tp, start) -> {
            if (start > 0) {
                System.err.println("ferry coordinator " + who + ": events partition " + tp.partition()
                        + " lost offsets 0" + " to " + (start - 1)
                        + " and no snapshot covers them: its jobs are folded from a tail, and may"
                        + " be decided on wrongly (a restart of this coordinator refuses such a topic)");
            }
        });
    }

    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> parts) {
        giveUp(parts, "gave up");
    }

    @Override
    public void onPartitionsLost(Collection<TopicPartition> parts) {
        giveUp(parts, "lost");
    }

    private void giveUp(Collection<TopicPartition> parts, String how) {
        if (parts.isEmpty() || closing) {
            return; // a coordinator closing hands everything back: nothing to say or forget
        }
        Set<Integer> gone = new HashSet<>();
        parts.forEach(tp -> gone.add(tp.partition()));
        Set<String> jobs = new TreeSet<>();
        partitionOf.forEach((job, p) -> {
            if (gone.contains(p)) {
                jobs.add(job);
            }
        });
        jobs.forEach(partitionOf::remove);
        parts.forEach(replayUntil::remove);
        replaying.removeAll(gone);
        liveFromSnapshot.removeAll(gone);
        if (snapshots != null) {
            snapshots.forget(parts);
        }
        drop.accept(jobs);
        System.err.println("ferry coordinator " + who + ": " + how + " events partitions " + numbers(parts)
                + (jobs.isEmpty() ? "" : ", jobs " + jobs + " go to another coordinator"));
    }

    /** Notes the record's job's partition; whether it is live (after the replay of its partition). */
    boolean live(ConsumerRecord<byte[], byte[]> r, String job) {
        if (!job.isEmpty()) {
            partitionOf.put(job, r.partition());
        }
        if (snapshots != null) {
            snapshots.folded(r);
        }
        return r.offset() >= replayUntil.getOrDefault(new TopicPartition(r.topic(), r.partition()), 0L);
    }

    /** After a poll: partitions whose replay reached its end are live from now on; returns their jobs. */
    Set<String> advance() {
        if (replaying.isEmpty() && liveFromSnapshot.isEmpty()) {
            return Set.of();
        }
        Set<Integer> done = new HashSet<>(liveFromSnapshot);
        liveFromSnapshot.clear();
        replaying.removeIf(p -> {
            TopicPartition tp = new TopicPartition(KafkaLog.EVENTS, p);
            boolean caughtUp = events.position(tp) >= replayUntil.getOrDefault(tp, 0L);
            if (caughtUp) {
                done.add(p);
            }
            return caughtUp;
        });
        Set<String> jobs = new TreeSet<>();
        partitionOf.forEach((job, p) -> {
            if (done.contains(p)) {
                jobs.add(job);
            }
        });
        return jobs;
    }

    /** Whether decisions for {@code job} must wait: its partition is still being replayed. */
    boolean replaying(String job) {
        Integer p = partitionOf.get(job);
        return p != null && replaying.contains(p);
    }

    /** Whether events partition {@code p} is still being replayed. */
    boolean replayingPartition(int p) {
        return replaying.contains(p);
    }

    /** The jobs of events partition {@code p} seen so far. */
    Set<String> jobsOf(int p) {
        Set<String> out = new TreeSet<>();
        partitionOf.forEach((job, q) -> {
            if (q == p) {
                out.add(job);
            }
        });
        return out;
    }

    /** Whether this coordinator joined its group and replayed what it owns. */
    boolean caughtUp() {
        return assignedOnce && replaying.isEmpty();
    }

    private static String numbers(Collection<TopicPartition> parts) {
        return new TreeSet<>(parts.stream().map(TopicPartition::partition).toList()).toString();
    }
}
