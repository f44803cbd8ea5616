package io.ferry.coordinator;

import io.ferry.model.Event;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CoordinatorMetersTest {
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final CoordinatorMeters meters = new CoordinatorMeters(registry);
    private final Jobs jobs = new Jobs();

    private void fold(Event... events) {
        for (Event e : events) {
            meters.observe(e, jobs.apply(e, 1000));
        }
    }

    @Test
    void aSnapshotFeedsTheHistogramsAndTheTierCounters() {
        fold(new Event.JobStarted("j", 2, 1000, true, "file:/s", "n"),
                new Event.CheckpointRequested("j", 0, "interval"),
                new Event.ImageCaptured("j", 0, 0, "n", 1000, 0.2),
                new Event.ImageCaptured("j", 0, 1, "n", 3000, 0.7),
                new Event.PredictionMade("j", 0, 4000, 2, 0.7, 3.0, 1.0, 3),
                new Event.ImageStaged("j", 0, 0, "remote", 1000, 400, 0.5),
                new Event.ImageStaged("j", 0, 1, "remote", 3000, 600, 0.9),
                new Event.SnapshotEstablished("j", 0, "remote", 4.0));
        String text = registry.scrape();
        assertEquals(2, registry.get("ferry.capture").timer().count());
        assertEquals(2, registry.get("ferry.staging").timer().count());
        assertEquals(1, registry.get("ferry.stall").timer().count());
        assertEquals(0.7, registry.get("ferry.stall").timer().max(TimeUnit.NANOSECONDS) / 1e9,
                1e-6,
                "the snapshot's stall is its longest rank's");
        assertEquals(4.0, registry.get("ferry.time.to.established").timer()
                .totalTime(TimeUnit.SECONDS), 1e-6);
        assertEquals(25, registry.get("ferry.forecast.abs.error").summary().totalAmount(), 1e-9, "100 |3 - 4| / 4");
        assertTrue(text.contains("ferry_raw_bytes_total{tier=\"local\"} 4000.0"), text);
        assertTrue(text.contains("ferry_stored_bytes_total{tier=\"remote\"} 1000.0"), text);
        assertTrue(text.contains("ferry_raw_bytes_total{tier=\"partner\"} 0.0"),
                "every tier is there from the start: " + text);
        // Histograms, not summaries: a Prometheus server aggregates buckets across coordinators.
        assertTrue(text.contains("# TYPE ferry_time_to_established_seconds histogram"), text);
        assertTrue(text.contains("ferry_time_to_established_seconds_bucket{le=\"5.0\"} 1"), text);
        assertTrue(text.contains("ferry_time_to_established_seconds_bucket{le=\"2.5\"} 0"), text);
        assertTrue(text.contains("ferry_forecast_abs_error_percent_bucket{le=\"30.0\"} 1"), text);
    }

    @Test
    void aSnapshotWithoutForecastRecordsNoError() {
        fold(new Event.JobStarted("j", 1, 1000, true, "file:/s", "n"),
                new Event.CheckpointRequested("j", 0, "interval"),
                new Event.ImageCaptured("j", 0, 0, "n", 10, 0.1),
                new Event.ImageStaged("j", 0, 0, "remote", 10, 10, 0.1),
                new Event.SnapshotEstablished("j", 0, "remote", 1.0));
        assertEquals(0, registry.get("ferry.forecast.abs.error").summary().count());
        assertEquals(1, registry.get("ferry.time.to.established").timer().count());
    }

    @Test
    void eventsThatMeasureNothingAreIgnored() {
        for (Event e : List.<Event>of(new Event.JobStarted("j", 1, 1000, true, "file:/s", "n"),
                new Event.Heartbeat("j", "n"), new Event.CaptureFailed("j", 0, "no"))) {
            meters.observe(e, jobs.apply(e, 1000));
        }
        assertEquals(0, registry.get("ferry.capture").timer().count());
    }
}
