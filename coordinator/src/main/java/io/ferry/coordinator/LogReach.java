package io.ferry.coordinator;

import io.ferry.eventlog.KafkaLog;
import io.ferry.model.DaemonThreads;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;

/**
 * Whether the event log answers this coordinator now. A consumer's poll comes back empty, and
 * promptly, when its brokers are away: read alone, an outage of the log looks like every node
 * falling silent at once. So a thread of its own asks the log for its topics once a second (a
 * metadata request, never answered from a cache); while that fails the coordinator decides
 * nothing by the clock (no node is judged silent, no rollback deadline passes), and once it
 * answers again every job's nodes get a whole heartbeat timeout, from then, to be heard
 * ({@link JobView#heardAllAt}). The probe runs beside the coordinator's thread, never on it: a
 * slow answer must not stall the coordinator's own reading of the log (its {@link Lease}).
 * Thread-safe.
 */
final class LogReach {
    private static final long PROBE_EVERY_MILLIS = 1000;
    private static final Duration PROBE_TIMEOUT = Duration.ofMillis(1500);
    private final KafkaLog log;
    private final LongSupplier clock;
    private final ScheduledExecutorService prober = Executors.newSingleThreadScheduledExecutor(
            DaemonThreads.named("ferry-coordinator-log-probe"));
    /** Since when the log has not answered (its clock, ms), or -1 while it answers. Prober thread writes. */
    private volatile long awaySince = -1;
    private final AtomicBoolean cameBack = new AtomicBoolean();

    LogReach(KafkaLog log, LongSupplier clock) {
        this.log = log;
        this.clock = clock;
    }

    /** Starts probing, once a second. */
    void start() {
        prober.scheduleWithFixedDelay(this::probe, 0, PROBE_EVERY_MILLIS, TimeUnit.MILLISECONDS);
    }

    private void probe() {
        boolean answered;
        try {
            answered = log.answers(PROBE_TIMEOUT);
        } catch (RuntimeException e) {
            // a client that cannot be made (bad kafka.* keys fail earlier): say it, keep probing
            System.err.println("ferry coordinator: cannot probe the event log: " + e);
            return;
        }
        long now = clock.getAsLong();
        if (!answered && awaySince < 0) {
            awaySince = now;
            System.err.println("ferry coordinator: the event log does not answer: nothing is decided by the clock"
                    + " (no node is judged silent) until it does");
        } else if (answered && awaySince >= 0) {
            System.err.printf("ferry coordinator: the event log answers again after %.1f s: every node gets a whole"
                    + " heartbeat timeout from now to be heard%n", (now - awaySince) / 1e3);
            awaySince = -1;
            cameBack.set(true);
        }
    }

    /** Whether the log answered at the last probe. */
    boolean reachable() {
        return awaySince < 0;
    }

    /** Whether the log came back since the last call (once per outage). */
    boolean cameBack() {
        return cameBack.getAndSet(false);
    }

    void close() {
        prober.shutdownNow();
    }
}
