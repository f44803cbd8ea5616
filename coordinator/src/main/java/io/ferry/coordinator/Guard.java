package io.ferry.coordinator;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.UncheckedIOException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The coordinator loop's guard around each piece of work (an event, a command, a tick, a state
 * record): a failure is logged and counted, never the end of the loop (STYLE 17); an interrupt
 * or wakeup, which is the loop being closed, goes through. Coordinator thread only.
 */
final class Guard {
    private static final Logger LOG = LoggerFactory.getLogger(Coordinator.class);
    private final AtomicLong failures;

    /** @param failures the coordinator's count of failed pieces of work */
    Guard(AtomicLong failures) {
        this.failures = failures;
    }

    /**
     * Runs one piece of work; a failure is logged and counted, never the end of the loop.
     * An event whose reaction failed is not retried (it is in the fold; the next tick
     * re-derives what is still to do: commits, checkpoints, heartbeats).
     */
    void run(ConsumerRecord<byte[], byte[]> r, String kind, Runnable work) {
        run(() -> kind + " at offset " + r.offset(), work); // the text is built only when it fails
    }

    void run(String what, Runnable work) {
        run(() -> what, work);
    }

    private void run(Supplier<String> what, Runnable work) {
        try {
            work.run();
        } catch (InterruptException | WakeupException e) {
            throw e;
        } catch (RuntimeException e) {
            failures.incrementAndGet();
            if (e instanceof UncheckedIOException || e instanceof KafkaException) {
                // a store or the log: expected
                LOG.warn("handling {} failed (carrying on): {}", what.get(), e.toString());
            } else {
                LOG.error("handling {} failed (carrying on)", what.get(), e); // a programming error: its stack trace
            }
        }
    }
}
