package io.ferry.coordinator;

import org.apache.kafka.clients.consumer.KafkaConsumer;

import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * Whether the event log answers this coordinator now. A consumer's poll comes back empty, and
 * promptly, when its brokers are away: read alone, an outage of the log looks like every node
 * falling silent at once. So the coordinator asks the log for its topics once a second (a
 * metadata request, never answered from a cache); while that fails, nothing is decided by
 * the clock (no node is judged silent, no rollback deadline passes), and once it answers again
 * every job's nodes get a whole heartbeat timeout, from then, to be heard
 * ({@link JobView#heardAllAt}). Coordinator thread only.
 */
final class LogReach {
    private static final long PROBE_EVERY_MILLIS = 1000;
    private static final Duration PROBE_TIMEOUT = Duration.ofMillis(1500);
    private final LongSupplier clock;
    private long probedAt; // 0: never (a clock in millis since the epoch is far past it)
    private long awaySince = -1;
    private boolean cameBack;

    LogReach(LongSupplier clock) {
        this.clock = clock;
    }

    /**
     * Whether the log answered at the last probe, probing first when the last is a second old.
     * After an outage, the first answer also sets {@link #cameBack()}.
     */
    boolean reachable(KafkaConsumer<byte[], byte[]> events) {
        long now = clock.getAsLong();
        if (now - probedAt < PROBE_EVERY_MILLIS) {
            return awaySince < 0;
        }
        probedAt = now;
        boolean answered;
        try {
            answered = !events.listTopics(PROBE_TIMEOUT).isEmpty();
        } catch (org.apache.kafka.common.errors.TimeoutException | org.apache.kafka.common.errors.DisconnectException e) {
            answered = false;
        }
        if (!answered && awaySince < 0) {
            awaySince = now;
            System.err.println("ferry coordinator: the event log does not answer: nothing is decided by the clock"
                    + " (no node is judged silent) until it does");
        } else if (answered && awaySince >= 0) {
            System.err.printf("ferry coordinator: the event log answers again after %.1f s: every node gets a whole"
                    + " heartbeat timeout from now to be heard%n", (clock.getAsLong() - awaySince) / 1e3);
            awaySince = -1;
            cameBack = true;
        }
        return awaySince < 0;
    }

    /** Whether the log came back since the last call (once per outage). */
    boolean cameBack() {
        boolean b = cameBack;
        cameBack = false;
        return b;
    }
}
