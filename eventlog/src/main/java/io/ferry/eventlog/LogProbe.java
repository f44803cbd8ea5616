package io.ferry.eventlog;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListTopicsOptions;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * Whether a Kafka cluster answers at all: a metadata request (a list of topics, never answered
 * from a client's cache) on an admin client of its own, made on first use and kept. A consumer
 * cannot tell: its poll comes back empty, and promptly, when its brokers are away. Thread-safe.
 */
final class LogProbe implements AutoCloseable {
    private final Supplier<Admin> make;
    private Admin admin;

    LogProbe(Supplier<Admin> make) {
        this.make = make;
    }

    /** Whether the cluster answered within {@code timeout}; blocks up to about that long. */
    boolean answers(Duration timeout) {
        Admin a;
        synchronized (this) {
            if (admin == null) {
                admin = make.get();
            }
            a = admin;
        }
        try {
            a.listTopics(new ListTopicsOptions().timeoutMs((int) timeout.toMillis())).names()
                    .get(timeout.toMillis() + 500, TimeUnit.MILLISECONDS);
            return true;
        } catch (ExecutionException | TimeoutException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Override
    public synchronized void close() {
        if (admin != null) {
            admin.close(Duration.ofSeconds(1));
        }
    }
}
