package io.ferry.coordinator.http;

import io.ferry.coordinator.CoordinatorMeters;
import io.ferry.coordinator.Jobs;
import io.ferry.model.Event;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertTrue;

class MetricsTest {
    /** The family names declared by {@code # TYPE} lines. */
    private static List<String> families(String text) {
        return text.lines().filter(l -> l.startsWith("# TYPE ")).map(l -> l.split(" ")[2]).toList();
    }

    @Test
    void jobStateFamiliesAndMicrometersNeverShareAName() {
        Jobs jobs = new Jobs();
        for (Event e : List.<Event>of(new Event.JobStarted("j", 1, 1000, true, "file:/s", "n"),
                new Event.CheckpointRequested("j", 0, "interval"),
                new Event.ImageCaptured("j", 0, 0, "n", 10, 0.1),
                new Event.ImageStaged("j", 0, 0, "remote", 10, 10, 0.1),
                new Event.SnapshotEstablished("j", 0, "remote", 1.0),
                new Event.CacheReported("j", "n", 1000, 500, 10, 1, 2),
                new Event.StoreHealthReported("j", "n", "s3://b/p", "OPEN", 3, 1, 1, 0))) {
            jobs.apply(e, 1000);
        }
        String own = Metrics.render(jobs, 0, 2000);
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        new CoordinatorMeters(registry); // every meter is registered up front, observed or not
        String micrometer = registry.scrape();
        assertTrue(families(own).contains("ferry_snapshot_stall_seconds"), own);
        assertTrue(families(micrometer).contains("ferry_stall_seconds"), micrometer);
        Set<String> seen = new HashSet<>();
        for (String f : families(own + micrometer)) {
            assertTrue(seen.add(f), "family " + f + " declared twice in one /metrics text");
        }
    }
}
