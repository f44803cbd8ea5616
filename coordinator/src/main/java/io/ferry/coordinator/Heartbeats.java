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
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The coordinator's reader of {@link KafkaLog#HEARTBEATS}: every partition, from where the topic
 * ended when the coordinator started, never from its beginning. A heartbeat says only that its
 * sender was alive when it arrived, so none is history to replay: a coordinator that starts (or
 * takes jobs over) gives each of their nodes a whole timeout from the end of the replay
 * ({@link JobView#heardAllAt}) and judges them by what it reads from then on. Each heartbeat is
 * handed on with the time it counts from ({@link #countsFrom}). Its consumer is not in the
 * coordinators' group: each coordinator reads every job's heartbeats and keeps those of its own
 * jobs (at 1,000 nodes, 200 small records a second). The nodes' staging progress comes the same
 * way. Any other record is counted and parked on the dead-letter topic. Coordinator thread only.
 */
final class Heartbeats implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(Coordinator.class);
    private final KafkaLog log;
    private final KafkaConsumer<byte[], byte[]> reader;
    private final AtomicLong malformed;
    private final Clock clock;
    private final long timeoutMillis;
    private long read;

    /**
     * @param malformed     the coordinator's count of malformed records
     * @param timeoutMillis the coordinator's heartbeat timeout
     */
    Heartbeats(KafkaLog log, AtomicLong malformed, Clock clock, long timeoutMillis) {
        this.log = log;
        this.clock = clock;
        this.timeoutMillis = timeoutMillis;
        this.reader = log.reader(KafkaLog.HEARTBEATS, false);
        this.malformed = malformed;
    }

    /** What the coordinator does with each record read. */
    interface Heard {
        /**
         * @param by       the login a relayed one came from, or null
         * @param atMillis when it counts from, on the coordinator's clock ({@link #countsFrom})
         */
        void accept(Event e, String by, long atMillis);
    }

    /**
     * Hands {@code each} the heartbeats and staging progress read since the last call, without
     * waiting for more than the consumer already fetched; returns how many. A heartbeat the
     * coordinator sees late only looks fresher, never older: lateness never makes a node look silent.
     */
    int drain(Heard each) {
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
            each.accept(e, RequestTopics.by(r), countsFrom(e, r.timestamp(), clock.millis(), timeoutMillis));
            n++;
        }
        read += n;
        return n;
    }

    /**
     * When a record counts from: a heartbeat from when it is read ({@code now}), on the coordinator's
     * clock, never its sender's (a node's skewed clock would make it look silent, or alive for ever); a
     * staging report from when it was logged, as its generation's marks and its node's rate count it:
     * the broker's stamp ({@code LogAppendTime}), where it lies within a heartbeat timeout of {@code
     * now} ({@code timeoutMillis}), else {@code now} (a topic made before Ferry stamped it so carries
     * its senders' clocks: a node's clock off by more than that counts as read). The coordinator reads
     * this topic 0.1 to 0.2 s after a report is logged, a tenth of a short snapshot, and by as much more
     * or less each time. A broker whose clock is off the coordinator's shifts a mark and the rest after
     * it alike, so the forecast from it does not move.
     */
    static long countsFrom(Event e, long loggedAtMillis, long now, long timeoutMillis) {
        return e instanceof Event.StagingProgress ? logged(loggedAtMillis, now, timeoutMillis) : now;
    }

    /**
     * A record's time ({@code loggedAtMillis}) where it lies within {@code timeoutMillis} of {@code now} on the
     * coordinator's clock, else {@code now}: a sender's or broker's clock off by more counts as read.
     */
    static long logged(long loggedAtMillis, long now, long timeoutMillis) {
        return Math.abs(now - loggedAtMillis) <= timeoutMillis ? loggedAtMillis : now;
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
