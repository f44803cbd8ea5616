package io.ferry.eventlog;

import io.ferry.model.Event;
import io.ferry.model.EventCodec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * The one loop that reads a topic from a consumer's position to its end as it is now (a replay:
 * `ferry status` folding the history, a coordinator reading its snapshots, an agent looking up
 * the jobs whose images it keeps), and the one way an event is decoded by a reader that only
 * looks: a malformed record is skipped, since the coordinator parks it. The coordinator's own
 * live loop is not this one: it also takes over partitions, and parks what it cannot decode.
 */
public final class LogReplay {
    private static final Duration POLL = Duration.ofMillis(200);
    /** A replay that waits as long as the log takes (a `ferry status` of a long history). */
    public static final Duration NO_LIMIT = Duration.ofNanos(Long.MAX_VALUE);

    private LogReplay() {}

    /**
     * Hands {@code each} every record from {@code c}'s position to the end offsets of its
     * assigned partitions as they were when called; false when {@code limit} passed first (what
     * was handed so far stays handed).
     */
    public static boolean records(KafkaConsumer<byte[], byte[]> c, Duration limit,
                                  Consumer<ConsumerRecord<byte[], byte[]>> each) {
        Map<TopicPartition, Long> ends = KafkaLog.ends(c);
        long deadline = System.nanoTime() + limit.toNanos();
        while (!KafkaLog.reached(c, ends)) {
            if (System.nanoTime() - deadline > 0) { // overflow-safe: NO_LIMIT never passes
                return false;
            }
            for (ConsumerRecord<byte[], byte[]> r : c.poll(POLL)) {
                each.accept(r);
            }
        }
        return true;
    }

    /** {@link #records}, each decoded to its event; malformed ones skipped ({@link #decoded}). */
    public static boolean events(KafkaConsumer<byte[], byte[]> c, Duration limit,
                                 BiConsumer<Event, ConsumerRecord<byte[], byte[]>> each) {
        return records(c, limit, r -> decoded(r).ifPresent(e -> each.accept(e, r)));
    }

    /** The record's event, or empty when it is malformed: the coordinator parks it, so a reader skips it. */
    public static Optional<Event> decoded(ConsumerRecord<byte[], byte[]> r) {
        try {
            return Optional.of(EventCodec.decode(r.value()));
        } catch (IllegalArgumentException malformed) {
            return Optional.empty();
        }
    }
}
