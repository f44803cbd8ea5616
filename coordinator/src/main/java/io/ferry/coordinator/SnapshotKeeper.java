package io.ferry.coordinator;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * When the coordinator snapshots its folded state, and where a partition it takes on starts: it
 * counts the records folded per events partition since the last snapshot, and once a partition
 * is live (its replay over) and {@link #every} records have been folded, it encodes the
 * partition's jobs on the coordinator thread ({@link FoldSnapshot}; the fold is not thread-safe)
 * and hands the bytes to {@link SnapshotTopic}, which writes them in the background. So a restart
 * replays at most about {@link #every} records per partition after its snapshot, whatever the
 * jobs' age. A partition holding a job set aside after a failure in its fold is not snapshotted:
 * its state is not what the fold of its events gives. Coordinator thread only, but for
 * {@link SnapshotTopic}'s own thread, which reports back through {@link #indexes}.
 */
final class SnapshotKeeper implements AutoCloseable {
    /** Records folded per partition between snapshots, unless set ({@code coordinator.snapshot-every}). */
    static final long DEFAULT_EVERY = 200_000;
    private final SnapshotTopic topic;
    private final long every;
    private final Map<Integer, Long> sinceSnapshot = new HashMap<>();
    private final AtomicLong folded = new AtomicLong();
    private final Map<Integer, ConsumerRecord<byte[], byte[]>> lastFolded = new HashMap<>();
    /** The newest snapshot of each partition known here: replaced (and its pieces deleted) by the next. */
    private final Map<Integer, SnapshotTopic.Index> indexes = new ConcurrentHashMap<>();

    /** @param every records folded per partition between snapshots; 0: none written (a start still loads one) */
    SnapshotKeeper(SnapshotTopic topic, long every) {
        if (every < 0) {
            throw new IllegalArgumentException("snapshot-every must be 0 (never) or a number of events, got " + every);
        }
        this.topic = topic;
        this.every = every;
    }

    /** Records folded per partition between snapshots; 0: none written. */
    long every() {
        return every;
    }

    /**
     * Where each taken-on partition starts, its snapshot's jobs handed to {@code install}; a
     * partition absent starts from its beginning.
     */
    Map<TopicPartition, Started> resume(Collection<TopicPartition> parts, Consumer<JobView> install) {
        Map<TopicPartition, Started> out = new HashMap<>();
        Map<Integer, SnapshotTopic.Loaded> loaded = topic.load(parts);
        for (TopicPartition tp : parts) {
            sinceSnapshot.remove(tp.partition());
            lastFolded.remove(tp.partition());
            SnapshotTopic.Loaded l = loaded.get(tp.partition());
            if (l != null) {
                l.jobs().forEach(install);
                indexes.put(tp.partition(), l.index());
                out.put(tp, new Started(l.nextOffset(), l.jobs().stream().map(JobView::job).toList()));
            }
        }
        return out;
    }

    /** A partition's start from a snapshot: the offset after the last record it folded, and its jobs. */
    record Started(long nextOffset, List<String> jobs) {}

    /** A record of an events partition was folded (or skipped as a replay would skip it: malformed, refused). */
    void folded(ConsumerRecord<byte[], byte[]> r) {
        sinceSnapshot.merge(r.partition(), 1L, Long::sum);
        folded.incrementAndGet();
        lastFolded.put(r.partition(), r);
    }

    /** Records of the events topic this coordinator folded (replayed or live); thread-safe. */
    long folded() {
        return folded.get();
    }

    /** Partitions given up: what was counted of them is another coordinator's now. */
    void forget(Collection<TopicPartition> parts) {
        parts.forEach(tp -> {
            sinceSnapshot.remove(tp.partition());
            lastFolded.remove(tp.partition());
            indexes.remove(tp.partition());
        });
    }

    /**
     * Snapshots each live partition that folded {@link #every} records since its last, unless one
     * of its jobs is held aside. {@code jobsOf}: a partition's jobs; {@code jobs}: their state.
     */
    void maybeWrite(Ownership ownership, Jobs jobs, Quarantine quarantine) {
        if (every == 0) {
            return;
        }
        for (Map.Entry<Integer, Long> e : sinceSnapshot.entrySet()) {
            int p = e.getKey();
            if (e.getValue() < every || ownership.replayingPartition(p)) {
                continue;
            }
            Set<String> names = ownership.jobsOf(p);
            if (names.stream().anyMatch(quarantine::holds)) {
                continue;
            }
            List<JobView> views = new ArrayList<>();
            names.forEach(n -> jobs.get(n).ifPresent(views::add));
            ConsumerRecord<byte[], byte[]> last = lastFolded.get(p);
            e.setValue(0L);
            topic.write(p, last.offset(), SnapshotTopic.crc(last.value()), FoldSnapshot.encode(views), indexes.get(p),
                    ix -> indexes.put(p, ix));
        }
    }

    @Override
    public void close() {
        topic.close();
    }
}
