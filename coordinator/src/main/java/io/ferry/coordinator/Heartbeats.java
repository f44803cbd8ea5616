package io.ferry.coordinator;

import io.ferry.eventlog.EventLines;
import io.ferry.eventlog.KafkaLog;
import io.ferry.eventlog.RequestTopics;
import io.ferry.model.Event;
import io.ferry.model.EventCodec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;

/**
 * The coordinator's reader of {@link KafkaLog#HEARTBEATS}: every partition, from where the topic
 * ended when the coordinator started, never from its beginning. A heartbeat says only that its
 * sender was alive when it arrived, so none is history to replay: a coordinator that starts (or
 * takes jobs over) gives each of their nodes a whole timeout from the end of the replay
 * ({@link JobView#heardAllAt}) and judges them by what it reads from then on. Each heartbeat is
 * handed on with the time it is read, on the coordinator's clock. Its consumer is not in the
 * coordinators' group: each coordinator reads every job's heartbeats and keeps those of its own
 * jobs (at 1,000 nodes, 200 small records a second). The nodes' staging progress comes the same
 * way. Any other record is counted and parked on the dead-letter topic. Coordinator thread only.
 */
final class Heartbeats implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(Coordinator.class);
    private final KafkaLog log;
    private final KafkaConsumer<byte[], byte[]> reader;
    private final AtomicLong malformed;
    private long read;

    /** @param malformed the coordinator's count of malformed records */
    Heartbeats(KafkaLog log, AtomicLong malformed) {
        this.log = log;
        this.reader = log.reader(KafkaLog.HEARTBEATS, false);
        this.malformed = malformed;
    }

    /**
     * Hands {@code each} the heartbeats and staging progress read since the last call, without
     * waiting for more than the consumer already fetched; returns how many. A heartbeat the
     * coordinator sees late only looks fresher, never older: lateness never makes a node look silent.
     */
    int drain(BiConsumer<Event, String> each) {
        int n = 0;
        for (ConsumerRecord<byte[], byte[]> r : reader.poll(Duration.ZERO)) {
            Event e;
            try {
                e = EventCodec.decode(r.value());
            } catch (IllegalArgumentException bad) {
                park(r, EventLines.oneLine(bad.getMessage()));
                continue;
            }
            if (!KafkaLog.live(e)) {
                park(r, "a " + e.getClass().getSimpleName() + " is neither a heartbeat nor staging progress");
                continue;
            }
            each.accept(e, RequestTopics.by(r)); // the login a relayed one came from, or null
            n++;
        }
        read += n;
        return n;
    }

    /** Heartbeats read so far. */
    long read() {
        return read;
    }

    private void park(ConsumerRecord<byte[], byte[]> r, String why) {
        malformed.incrementAndGet();
        LOG.warn("parked record of {} at offset {}: {}", KafkaLog.HEARTBEATS, r.offset(), why);
        log.sendRaw(KafkaLog.DEAD_LETTER, KafkaLog.HEARTBEATS + "-" + r.partition() + "-" + r.offset(), r.value());
    }

    @Override
    public void close() {
        KafkaLog.closeNow(reader);
    }
}
