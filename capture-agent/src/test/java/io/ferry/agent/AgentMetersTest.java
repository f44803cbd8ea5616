package io.ferry.agent;

import io.ferry.model.Event;
import io.ferry.staging.OpenedStore;
import io.ferry.staging.Staging;
import io.ferry.staging.StagingConfig;
import io.ferry.stores.CountingStore;
import io.ferry.stores.Resilience;
import io.ferry.stores.ResilientStore;
import io.ferry.stores.Store;
import io.ferry.stores.posix.PosixStore;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AgentMetersTest {
    @TempDir
    Path tmp;
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final AgentMeters meters = new AgentMeters(registry);

    @Test
    void reportsFeedTheTierCountersHistogramsAndCacheGauges() {
        meters.observe(new Event.ImageCaptured("j", 0, 0, "n", 5000, 0.3));
        meters.observe(new Event.PartnerCopied("j", 0, "n", "m", "0", 5000, 0.1));
        meters.observe(new Event.ImageStaged("j", 0, 0, "remote", 5000, 1200, 0.8));
        meters.observe(new Event.CacheReported("j", "n", 1_000_000, 400_000, 5000, 1, 2));
        meters.observe(new Event.Heartbeat("j", "n"));
        String text = registry.scrape();
        assertTrue(text.contains("ferry_agent_raw_bytes_total{tier=\"local\"} 5000.0"), text);
        assertTrue(text.contains("ferry_agent_stored_bytes_total{tier=\"partner\"} 5000.0"), text);
        assertTrue(text.contains("ferry_agent_stored_bytes_total{tier=\"remote\"} 1200.0"), text);
        assertTrue(text.contains("ferry_agent_capture_seconds_bucket{le=\"0.5\"} 1"), text);
        assertTrue(text.contains("ferry_agent_staging_seconds_count 1"), text);
        assertTrue(text.contains("ferry_agent_cache_free_bytes 400000.0"), text);
        assertTrue(text.contains("ferry_agent_cache_job_bytes{job=\"j\"} 5000.0"), text);
        assertTrue(text.contains("ferry_agent_cache_generations{job=\"j\"} 1.0"), text);
        meters.closed("j");
        assertFalse(registry.scrape().contains("ferry_agent_cache_job_bytes{"),
                "a job that left the node leaves no gauge");
    }

    @Test
    void theStoreIsReadWhenScrapedAndForgottenWhenClosed() throws Exception {
        try (OpenedStore store = OpenedStore.open(tmp.resolve("store").toString(), Map.of())) {
            meters.opened("j", store);
            store.store().put("jobs/j/0/x", ByteBuffer.wrap(new byte[300]));
            String text = registry.scrape();
            String labels = "{job=\"j\",store=\"" + store.store().uri() + "\"}";
            assertTrue(text.contains("ferry_agent_store_objects_written_total" + labels + " 1.0"), text);
            assertTrue(text.contains("ferry_agent_store_written_bytes_total" + labels + " 300.0"), text);
            assertFalse(text.contains("ferry_agent_store_circuit"), "a file: store has no breaker: " + text);
            meters.closed("j");
            assertFalse(registry.scrape().contains("ferry_agent_store_"), registry.scrape());
        }
    }

    @Test
    void aStoreBehindTheResilienceLayerAlsoShowsItsRetriesAndCircuit() throws Exception {
        // What Stores.open makes of an S3 or HDFS URI, over a real POSIX store here.
        Store remote = new CountingStore(new ResilientStore(
                PosixStore.open(tmp.resolve("remote"), Map.of()),
                Resilience.DEFAULTS));
        try (OpenedStore store = new OpenedStore(remote, Staging.pipeline(remote,
                StagingConfig.from(Map.of()), Clock.systemUTC()))) {
            meters.opened("j", store);
            store.store().put("jobs/j/0/x", ByteBuffer.wrap(new byte[10]));
            String text = registry.scrape();
            String labels = "{job=\"j\",store=\"" + store.store().uri() + "\"}";
            assertTrue(text.contains("ferry_agent_store_circuit" + labels + " 0.0"), text);
            assertTrue(text.contains("ferry_agent_store_retries_total" + labels + " 0.0"), text);
            assertTrue(text.contains("ferry_agent_store_rejected_calls_total" + labels + " 0.0"), text);
            assertTrue(text.contains("ferry_agent_store_objects_written_total" + labels + " 1.0"), text);
        }
    }

    @Test
    void circuitStatesAreNumberedClosedHalfOpenOpen() {
        assertEquals(0, AgentMeters.circuit("CLOSED"));
        assertEquals(1, AgentMeters.circuit("HALF_OPEN"));
        assertEquals(2, AgentMeters.circuit("OPEN"));
        assertEquals(2, AgentMeters.circuit("FORCED_OPEN"));
    }
}
