package io.ferry.coordinator;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Whether the coordinator may decide anything now: only on a fresh reading of the log. A
 * reading is fresh for {@code lease} from the start of the last poll that came back within
 * {@code lease}. A coordinator that was stalled (a poll that came back late, or a batch whose
 * handling outlived the lease: a GC pause, SIGSTOP, a VM frozen for migration, a disk that
 * hung) decides nothing more until it has read the log promptly for {@code settle}, one
 * group heartbeat and some: by then it has folded what happened meanwhile (the heartbeats that
 * did arrive, so a stall of its own is not taken for silent nodes), and a group that gave its
 * jobs to another coordinator meanwhile has told it so (its partitions come back as lost, and
 * it forgets their jobs) instead of it acting on them as a zombie.
 *
 * <p>While it settles, events are still folded and reacted to (a staged snapshot is committed,
 * a launch answered): the fold must go on for the reading to catch up, and those reactions
 * follow from the events, not from the clock. What it does not close: a stall that falls
 * between this check and the append it guards (the time of one append), and reactions to the
 * first batch read after a stall, before the group has said the partition is gone (Kafka
 * transactions would close both, at a commit per batch).
 * Coordinator thread only.
 */
final class Lease {
    private final long leaseNanos;
    private final long settleNanos;
    private long readAt;
    private long settledAt;
    private long stalls;

    Lease(Duration lease, Duration settle) {
        this.leaseNanos = lease.toNanos();
        this.settleNanos = settle.toNanos();
        this.readAt = System.nanoTime();
        this.settledAt = readAt;
    }

    /**
     * The lease for a coordinator whose group moves its jobs after {@code takeoverAfter} and that
     * takes nodes silent for {@code heartbeatTimeout} as lost: a quarter of the heartbeat timeout,
     * half the takeover time at most, 250 ms at least.
     */
    static Lease of(Duration takeoverAfter, Duration heartbeatTimeout) {
        long lease = Math.max(250, Math.min(takeoverAfter.toMillis() / 2, heartbeatTimeout.toMillis() / 4));
        long groupHeartbeat = Math.max(500, takeoverAfter.toMillis() / 4); // KafkaLog.groupReader's interval
        return new Lease(Duration.ofMillis(lease), Duration.ofMillis(groupHeartbeat + 500));
    }

    /**
     * Call right before polling the log; pass the result to {@link #polled}. With {@code judged}
     * (the coordinator is live), a stall since the last reading is noticed here too: one between
     * two polls (while it published its state, say) ends in a prompt poll, which alone would make
     * the reading look fresh, and the coordinator would decide on heartbeats the stall kept from
     * it (seen: a job ended 0.24 s after a thaw, `CoordinatorStallIT` under load).
     */
    long polling(boolean judged) {
        long now = System.nanoTime();
        if (judged && now - readAt > leaseNanos) {
            stalled(now, now - readAt, "too long since its last reading of the log");
        }
        return now;
    }

    /** After a poll that started at {@code startedAt}: fresh if it came back within the lease. */
    void polled(long startedAt) {
        long now = System.nanoTime();
        if (now - startedAt > leaseNanos) {
            stalled(now, now - startedAt, "a poll of the log came back late");
        } else {
            readAt = startedAt;
        }
    }

    /** Before the coordinator is first live (joining the group, replaying: slow by nature): a poll counts as prompt. */
    void polledWhileStarting(long startedAt) {
        readAt = startedAt;
    }

    /**
     * Whether the last reading of the log is fresh: records of it may still be handled (folded,
     * and reacted to). When not, the batch in hand is put back and the log read again.
     */
    boolean fresh() {
        long now = System.nanoTime();
        if (now - readAt > leaseNanos) {
            stalled(now, now - readAt, "its last reading of the log is too old");
            return false;
        }
        return true;
    }

    /**
     * Whether a decision may be taken now (by time: heartbeat timeouts, intervals, rollbacks;
     * or on a command): the reading is fresh and the last stall is {@code settle} behind.
     */
    boolean held() {
        return fresh() && System.nanoTime() - settledAt >= 0;
    }

    /**
     * Hands the records of {@code batch} to {@code each}, one by one, while the reading is fresh
     * (with {@code judged} false, as before the coordinator is first live, all of them). If it
     * goes stale, {@code consumer} is put back to the first record not handled, so that the next
     * poll brings it again (or hands it to the coordinator that owns it now): nothing is folded
     * twice or skipped. Returns whether the whole batch was handled.
     */
    boolean handle(KafkaConsumer<byte[], byte[]> consumer, ConsumerRecords<byte[], byte[]> batch, boolean judged,
                   Consumer<ConsumerRecord<byte[], byte[]>> each) {
        List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>(batch.count());
        batch.forEach(records::add);
        for (int i = 0; i < records.size(); i++) {
            if (judged && !fresh()) {
                Map<TopicPartition, Long> resume = new HashMap<>();
                for (ConsumerRecord<byte[], byte[]> r : records.subList(i, records.size())) {
                    resume.putIfAbsent(new TopicPartition(r.topic(), r.partition()), r.offset());
                }
                resume.forEach(consumer::seek);
                return false;
            }
            each.accept(records.get(i));
        }
        return true;
    }

    /** Stalls noticed so far. */
    long stalls() {
        return stalls;
    }

    private void stalled(long now, long nanos, String why) {
        if (now - settledAt >= 0) { // a new stall, not the same one seen again
            stalls++;
            System.err.println(String.format("ferry coordinator: stalled for %.1f s (%s): deciding nothing until it has"
                    + " read the log promptly for %.1f s", nanos / 1e9, why, settleNanos / 1e9)); // one write: one line
        }
        settledAt = now + settleNanos;
        readAt = Math.min(readAt, now - leaseNanos - 1); // stale until the next prompt poll
    }
}
