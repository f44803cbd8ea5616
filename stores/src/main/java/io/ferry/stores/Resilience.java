package io.ferry.stores;

import java.time.Duration;

/**
 * How a {@link ResilientStore} treats a remote store that misbehaves.
 *
 * @param attempts        tries per call, the first included; only transient failures are retried
 * @param initialBackoff  wait before the first retry; each further wait doubles, up to {@code maxBackoff}
 * @param maxBackoff      longest wait between two tries
 * @param jitter          each wait is drawn uniformly within +-jitter of its nominal value (0..1), so
 *                        nodes that failed together do not retry together
 * @param failureRate     percentage of failed calls, over the last {@code window} calls, that opens the
 *                        circuit: while open, calls fail at once without touching the store
 * @param window          calls the failure rate is measured over (and the least before it counts)
 * @param openFor         how long the circuit stays open before a few trial calls probe the store
 * @param maxFiles        objects in transfer at once, per store per process (the node's bulkhead); the
 *                        default 10 follows Open MPI's stage component
 * @param maxBytes        bytes in transfer at once, per store per process
 */
public record Resilience(int attempts, Duration initialBackoff, Duration maxBackoff, double jitter,
                         float failureRate, int window, Duration openFor, int maxFiles, long maxBytes) {
    public static final Resilience DEFAULTS = new Resilience(5, Duration.ofMillis(200), Duration.ofSeconds(10), 0.5,
            50f, 20, Duration.ofSeconds(10), 10, 256L << 20);

    public Resilience {
        if (attempts < 1 || maxFiles < 1 || window < 1 || maxBytes < 1) {
            throw new IllegalArgumentException("attempts, window, maxFiles and maxBytes must be >= 1");
        }
        if (jitter < 0 || jitter >= 1) {
            throw new IllegalArgumentException("jitter must be within 0 (inclusive) and 1 (exclusive), got " + jitter);
        }
        if (failureRate <= 0 || failureRate > 100) {
            throw new IllegalArgumentException("failure rate must be within 0..100 percent, got " + failureRate);
        }
        if (initialBackoff.isNegative() || initialBackoff.isZero() || maxBackoff.compareTo(initialBackoff) < 0
                || openFor.isNegative() || openFor.isZero()) {
            throw new IllegalArgumentException("backoffs and openFor must be positive, maxBackoff >= initialBackoff");
        }
    }
}
