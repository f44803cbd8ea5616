package io.ferry.coordinator;

import io.ferry.model.Event;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The coordinator's Micrometer meters, fed with each live event as the coordinator folds it:
 * histograms of the rank capture time, the snapshot stall (its longest rank), the rank staging
 * time, the time from request to established and the forecast's relative error, and counters of
 * raw and stored bytes per tier. A replay of the log at start-up feeds nothing: like any
 * Prometheus counter they count what this process saw, and a restart starts them at zero.
 * Meters carry no job label: a long-lived coordinator sees an unbounded number of jobs, and
 * the per-job view is the job-state families of {@code /metrics} and the JSON API. Thread-safe.
 */
public final class CoordinatorMeters {
    /** Histogram buckets of the durations, in seconds: a capture takes milliseconds, staging up to an hour. */
    static final Duration[] SECONDS_BUCKETS = durations(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300,
            600, 1800, 3600);
    /**
     * Histogram buckets of 100 |forecast - actual| / actual. In percent, not as a ratio: Micrometer
     * counts a summary's value in the bucket of its ceiling, so a ratio of 0.25 would land in le=1.
     */
    static final double[] ERROR_BUCKETS = {5, 10, 20, 30, 50, 100, 200, 500, 1000};

    private final MeterRegistry registry;
    private final Timer capture;
    private final Timer stall;
    private final Timer staging;
    private final Timer established;
    private final DistributionSummary forecastError;
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();

    public CoordinatorMeters(MeterRegistry registry) {
        this.registry = registry;
        this.capture = histogram("ferry.capture", "Rank images captured: the rank's stall (ImageCaptured).");
        this.stall = histogram("ferry.stall", "Established snapshots: their longest rank stall.");
        this.staging = histogram("ferry.staging", "Rank images staged to the store: time to push (ImageStaged).");
        this.established = histogram("ferry.time.to.established", "Established snapshots: request to commit marker.");
        this.forecastError = DistributionSummary.builder("ferry.forecast.abs.error")
                .description("Established snapshots that had a forecast: 100 |forecast - actual| / actual"
                        + " of time to established.")
                .baseUnit("percent")
                .serviceLevelObjectives(ERROR_BUCKETS)
                .register(registry);
        for (String tier : new String[]{"local", "partner", "remote"}) {
            bytes("raw", tier);
            bytes("stored", tier);
        }
    }

    /** Observes {@code e}, already folded into {@code job} (its state after the event). */
    void observe(Event e, JobView job) {
        if (e instanceof Event.ImageCaptured c) {
            capture.record(seconds(c.seconds()));
            bytes("raw", "local").increment(c.bytes());
            bytes("stored", "local").increment(c.bytes()); // the cache holds images as captured
        } else if (e instanceof Event.PartnerCopied p) {
            bytes("raw", "partner").increment(p.bytes());
            bytes("stored", "partner").increment(p.bytes());
        } else if (e instanceof Event.ImageStaged s) {
            staging.record(seconds(s.seconds()));
            bytes("raw", s.tier()).increment(s.rawBytes());
            bytes("stored", s.tier()).increment(s.storedBytes());
        } else if (e instanceof Event.SnapshotEstablished s && s.secondsSinceRequest() >= 0) {
            // not one found on the store
            established.record(seconds(s.secondsSinceRequest()));
            GenerationView g = job.generations.get(s.generation());
            if (g != null) {
                stall.record(seconds(g.maxStallSeconds()));
                if (g.prediction != null && s.secondsSinceRequest() > 0) {
                    double predicted = g.prediction.predictedSecondsToEstablished();
                    forecastError.record(100 * Math.abs(predicted - s.secondsSinceRequest()) / s.secondsSinceRequest());
                }
            }
        }
    }

    private Timer histogram(String name, String help) {
        return Timer.builder(name).description(help).serviceLevelObjectives(SECONDS_BUCKETS).register(registry);
    }

    /** {@code ferry_raw_bytes_total} or {@code ferry_stored_bytes_total} of {@code tier}. */
    private Counter bytes(String kind, String tier) {
        return counters.computeIfAbsent(kind + "/" + tier, k -> Counter.builder("ferry." + kind)
                .description(kind.equals("raw") ? "Bytes of rank images as captured, by the tier they reached."
                        : "Bytes the tier holds of those images (compressed and deduplicated on the store).")
                .baseUnit("bytes")
                .tag("tier", tier)
                .register(registry));
    }

    private static Duration seconds(double s) {
        return Double.isFinite(s) && s > 0 ? Duration.ofNanos((long) (s * 1e9)) : Duration.ZERO;
    }

    private static Duration[] durations(double... seconds) {
        Duration[] out = new Duration[seconds.length];
        for (int i = 0; i < seconds.length; i++) {
            out[i] = seconds(seconds[i]);
        }
        return out;
    }
}
