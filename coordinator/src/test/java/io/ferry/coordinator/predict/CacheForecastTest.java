package io.ferry.coordinator.predict;

import io.ferry.coordinator.JobView;
import io.ferry.coordinator.Jobs;
import io.ferry.model.Event;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CacheForecastTest {
    private static final long GB = 1_000_000_000L;
    private final Jobs jobs = new Jobs();

    /** A job checkpointing every 60 s; generation 0 (requested at t=0) put 1 GB on n0 in two ranks. */
    private JobView job() {
        JobView j = jobs.apply(new Event.JobStarted("j", 2, 60_000, false, "file:/s", "n0"), 0);
        jobs.apply(new Event.CheckpointRequested("j", 0, "interval"), 0);
        jobs.apply(new Event.ImageCaptured("j", 0, 0, "n0", GB / 2, 0.1), 0);
        jobs.apply(new Event.ImageCaptured("j", 0, 1, "n0", GB / 2, 0.1), 0);
        return j;
    }

    @Test
    void neverFullWhenTheRetentionPeakFits() {
        JobView j = job();
        Event.CacheReported r = new Event.CacheReported("j", "n0", 100 * GB, 10 * GB, GB, 1, 2);
        CacheForecast f = CacheForecast.of(j, r, 20_000);
        assertTrue(f.neverFull());
        assertEquals(3 * GB, f.peakBytes(), "keep 2 plus the one being captured");
        assertTrue(f.line().contains("never full at retention 2"), f.line());
    }

    @Test
    void fillsWhenTheRetentionPeakDoesNotFit() {
        JobView j = job();
        // Peak needs 2 GB more; 1.5 GB is free: one more generation fits, the second does not.
        Event.CacheReported r = new Event.CacheReported("j", "n0", 100 * GB, 3 * GB / 2, GB, 1, 2);
        CacheForecast f = CacheForecast.of(j, r, 20_000);
        assertFalse(f.neverFull());
        assertEquals(1, f.fitsMore());
        assertEquals(40 + 60, f.secondsUntilFull(), 1e-9, "next request in 40 s, then one interval");
        assertTrue(f.line().contains("FULL after 1 more checkpoints"), f.line());
    }

    @Test
    void aStoreThatIsDownDropsNothingSoEveryGenerationCounts() {
        JobView j = job();
        jobs.apply(new Event.StoreHealthReported("j", "n0", "s3://b", "OPEN", 5, 3, 2, 0), 0);
        Event.CacheReported r = new Event.CacheReported("j", "n0", 100 * GB, 10 * GB, GB, 1, 2);
        CacheForecast f = CacheForecast.of(j, r, 0);
        assertEquals(10, f.fitsMore());
        assertEquals(60 + 10 * 60, f.secondsUntilFull(), 1e-9);
        assertTrue(f.line().contains("the store is down"), f.line());
    }

    @Test
    void unknownBeforeTheFirstCaptureAndWithoutAnInterval() {
        JobView fresh = jobs.apply(new Event.JobStarted("k", 1, 0, false, "file:/s", "n0"), 0);
        CacheForecast none = CacheForecast.of(fresh, new Event.CacheReported("k", "n0", 100, 50, 0, 0, 2), 0);
        assertTrue(Double.isNaN(none.secondsUntilFull()));
        assertTrue(none.line().contains("unknown until a generation is captured"), none.line());
        jobs.apply(new Event.ImageCaptured("k", 0, 0, "n0", 40, 0.1), 0);
        CacheForecast onRequest = CacheForecast.of(fresh, new Event.CacheReported("k", "n0", 100, 50, 40, 1, 2), 0);
        assertEquals(1, onRequest.fitsMore());
        assertTrue(Double.isNaN(onRequest.secondsUntilFull()));
        assertTrue(onRequest.line().contains("only on request"), onRequest.line());
    }

    @Test
    void theForecastReachesTheJobForecast() {
        JobView j = job();
        jobs.apply(new Event.CacheReported("j", "n0", 100 * GB, 3 * GB / 2, GB, 1, 2), 0);
        JobForecast f = JobForecast.of(j, Double.NaN, 20_000);
        assertEquals(1, f.caches().size());
        assertTrue(f.lines().stream().anyMatch(l -> l.startsWith("cache on n0") && l.contains("in 100 s")),
                f.lines().toString());
    }
}
