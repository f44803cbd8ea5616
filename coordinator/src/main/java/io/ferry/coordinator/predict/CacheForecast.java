package io.ferry.coordinator.predict;

import io.ferry.coordinator.GenerationView;
import io.ferry.coordinator.JobView;
import io.ferry.model.Durations;
import io.ferry.model.Event;
import io.ferry.model.Sizes;

import java.util.Locale;
import java.util.Optional;

/**
 * When one node's cache fills under the job's current interval and retention, from the node's
 * latest {@link Event.CacheReported} and the size of the job's newest generation on it.
 *
 * <p>The model: retention runs once a generation is staged, so between a capture and its
 * retention pass the cache holds {@code keep + 1} generations of the job; that is its peak. If
 * the growth to that peak fits in today's free space the cache never fills from this job.
 * Otherwise (or while the node's store is down: nothing staged, nothing dropped) every
 * further checkpoint takes one generation's bytes until the free space is gone. The free
 * space is the file system's, shared with whatever else writes there: the forecast holds
 * for today's neighbours.
 *
 * @param node              the node
 * @param report            its latest cache report
 * @param bytesPerGeneration raw bytes the newest captured generation put on this node (0: none yet)
 * @param storeDown         the node's store circuit is open, so retention drops nothing
 * @param peakBytes         bytes the job's generations reach at the peak under retention
 * @param fitsMore          further generations that fit in today's free space ({@code Long.MAX_VALUE}: never full)
 * @param secondsUntilFull  seconds until the checkpoint that does not fit is requested (infinite:
 *                          never; NaN: unknown, no size yet or checkpoints only on request)
 */
public record CacheForecast(String node, Event.CacheReported report, long bytesPerGeneration, boolean storeDown,
                            long peakBytes, long fitsMore, double secondsUntilFull) {

    public static CacheForecast of(JobView job, Event.CacheReported report, long nowMillis) {
        long perGen = 0;
        for (GenerationView g : job.generations()) {
            if (g.state() != GenerationView.State.FAILED && g.bytesOn(report.node()) > 0) {
                perGen = g.bytesOn(report.node()); // newest wins: generations ascend
            }
        }
        boolean down = job.storeHealth().stream()
                .anyMatch(h -> h.node().equals(report.node()) && "OPEN".equals(h.circuit()));
        long peak = perGen * (report.keepGenerations() + 1L);
        if (perGen == 0) {
            return new CacheForecast(report.node(), report, 0, down, 0, Long.MAX_VALUE, Double.NaN);
        }
        if (!down && peak - report.jobBytes() <= report.freeBytes()) {
            return new CacheForecast(report.node(), report, perGen, false, peak, Long.MAX_VALUE,
                    Double.POSITIVE_INFINITY);
        }
        long fits = report.freeBytes() / perGen;
        double interval = job.settings().map(s -> s.intervalMillis() / 1000.0).orElse(0.0);
        double seconds = Double.NaN;
        if (interval > 0) {
            double sinceRequest = Math.max(0, (nowMillis - job.lastRequestMillis()) / 1000.0);
            seconds = Math.max(0, interval - sinceRequest) + fits * interval;
        }
        return new CacheForecast(report.node(), report, perGen, down, peak, fits, seconds);
    }

    /** Whether this job will never fill the cache at its current interval and retention. */
    public boolean neverFull() {
        return Double.isInfinite(secondsUntilFull);
    }

    /** One line for {@code ferry status}. */
    public String line() {
        String head = String.format(Locale.ROOT, "cache on %s: %s free of %s, the job holds %d generations (%s)",
                node, Sizes.format(report.freeBytes()), Sizes.format(report.capacityBytes()), report.generations(),
                Sizes.format(report.jobBytes()));
        if (bytesPerGeneration == 0) {
            return head + "; full: unknown until a generation is captured";
        }
        if (neverFull()) {
            return head + String.format(Locale.ROOT, "; never full at retention %d (peak %s, %s per generation)",
                    report.keepGenerations(), Sizes.format(peakBytes), Sizes.format(bytesPerGeneration));
        }
        String why = storeDown ? "the store is down, so nothing is dropped" : String.format(Locale.ROOT,
                "retention %d needs %s at its peak", report.keepGenerations(), Sizes.format(peakBytes));
        String when = Double.isNaN(secondsUntilFull) ? "checkpoints are taken only on request"
                : "in " + Durations.human(secondsUntilFull);
        return head + String.format(Locale.ROOT, "; FULL after %d more checkpoints of %s (%s): %s", fitsMore,
                Sizes.format(bytesPerGeneration), why, when);
    }

    /** Seconds until full, for a node heading for a full cache; empty when never or unknown. */
    public Optional<Double> fullInSeconds() {
        return neverFull() || Double.isNaN(secondsUntilFull) ? Optional.empty() : Optional.of(secondsUntilFull);
    }
}
