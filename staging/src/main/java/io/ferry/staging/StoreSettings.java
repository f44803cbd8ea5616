package io.ferry.staging;

import io.ferry.model.ConfigKey;
import io.ferry.model.ConfigTable;
import io.ferry.stores.Resilience;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The {@code store.*} keys: how Ferry treats a remote (HDFS, S3) store that misbehaves, parsed
 * into a {@link Resilience}. Defaults are {@link Resilience#DEFAULTS}.
 */
public final class StoreSettings {
    private static final Resilience D = Resilience.DEFAULTS;

    public static final ConfigKey<Integer> ATTEMPTS = ConfigKey.intKey("store.retry.attempts",
            "Tries per remote call, the first included; only transient failures are retried.", D.attempts(), 1, 100);
    public static final ConfigKey<Duration> INITIAL_BACKOFF = ConfigKey.durationKey("store.retry.initial-backoff",
            "Wait before the first retry; each further wait doubles.", "200ms", Duration.ofMillis(1),
            Duration.ofMinutes(10));
    public static final ConfigKey<Duration> MAX_BACKOFF = ConfigKey.durationKey("store.retry.max-backoff",
            "Longest wait between two tries.", "10s", Duration.ofMillis(1), Duration.ofHours(1));
    public static final ConfigKey<Double> JITTER = ConfigKey.doubleKey("store.retry.jitter",
            "Each wait is drawn within +-this fraction of its nominal value, so nodes do not retry in step.",
            D.jitter(), 0.0, 0.99);
    public static final ConfigKey<Integer> FAILURE_RATE = ConfigKey.intKey("store.breaker.failure-rate",
            "Percentage of failed calls, over the breaker's window, that marks the store down (calls then fail fast).",
            (int) D.failureRate(), 1, 100);
    public static final ConfigKey<Integer> WINDOW = ConfigKey.intKey("store.breaker.window",
            "Calls the failure rate is measured over (judged once 5 of them, or the whole window if smaller, are in).",
            D.window(), 1, 10_000);
    public static final ConfigKey<Duration> OPEN_FOR = ConfigKey.durationKey("store.breaker.open-for",
            "How long a store marked down is left alone before trial calls probe it.", "10s",
            Duration.ofMillis(1), Duration.ofHours(1));
    public static final ConfigKey<Integer> FILES = ConfigKey.intKey("store.bulkhead.files",
            "Objects in transfer at once per node and store (Open MPI's stage component uses 10).",
            D.maxFiles(), 1, 1024);
    public static final ConfigKey<Long> BYTES = ConfigKey.sizeKey("store.bulkhead.bytes",
            "Bytes in transfer at once per node and store.", "256MiB", 1L << 20, 64L << 30);

    public static final ConfigTable TABLE = new ConfigTable(List.of(ATTEMPTS, INITIAL_BACKOFF, MAX_BACKOFF, JITTER,
            FAILURE_RATE, WINDOW, OPEN_FOR, FILES, BYTES));

    private StoreSettings() {}

    /** Parses user settings; unknown keys and bad values fail naming the key. */
    public static Resilience resilience(Map<String, String> settings) {
        ConfigTable.Resolved r = TABLE.resolve(settings);
        if (r.get(MAX_BACKOFF).compareTo(r.get(INITIAL_BACKOFF)) < 0) {
            throw new IllegalArgumentException(MAX_BACKOFF.name() + " must be at least " + INITIAL_BACKOFF.name());
        }
        return new Resilience(r.get(ATTEMPTS), r.get(INITIAL_BACKOFF), r.get(MAX_BACKOFF), r.get(JITTER),
                r.get(FAILURE_RATE), r.get(WINDOW), r.get(OPEN_FOR), r.get(FILES), r.get(BYTES));
    }
}
