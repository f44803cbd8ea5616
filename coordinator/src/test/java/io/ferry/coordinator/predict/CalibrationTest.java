package io.ferry.coordinator.predict;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.ferry.coordinator.JobView;
import io.ferry.coordinator.Jobs;
import io.ferry.model.Event;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CalibrationTest {
    private static final double MB = 1e6;
    /** Rank 1 is 10% slower than rank 0: the slowest over the mean of the two. */
    private static final double SPREAD = 2 / (1 / 1.1 + 1);
    @TempDir
    Path tmp;
    private final Jobs jobs = new Jobs();

    /**
     * Two ranks on one node: stall = 0.05 s + nodeBytes / 400 MB/s (rank 1 is 10% slower),
     * staging at 200 MB/s, stored at half size, 0.3 s fixed on top.
     */
    private JobView history(long... sizes) {
        JobView j = jobs.apply(new Event.JobStarted("j", 2, 0, false, "file:/s", "n"), 0);
        for (int g = 0; g < sizes.length; g++) {
            long raw = sizes[g];
            double stall = 0.05 + raw / (400 * MB);
            jobs.apply(new Event.CheckpointRequested("j", g, "request"), 0);
            jobs.apply(new Event.ImageCaptured("j", g, 0, "n", raw / 2, stall / 1.1), 0);
            jobs.apply(new Event.ImageCaptured("j", g, 1, "n", raw - raw / 2, stall), 0);
            double staging = raw / (200 * MB);
            jobs.apply(new Event.ImageStaged("j", g, 0, "remote", raw / 2, raw / 4, staging / 2), 0);
            jobs.apply(new Event.ImageStaged("j", g, 1, "remote", raw - raw / 2, (raw - raw / 2) / 2, staging / 2), 0);
            jobs.apply(new Event.SnapshotEstablished("j", g, "remote", 0.3 + stall + staging), 0);
        }
        return j;
    }

    @Test
    void measuresEachTierOfTheJob() {
        Calibration c = Calibration.measure(history(100_000_000, 300_000_000, 200_000_000, 400_000_000, 100_000_000,
                800_000_000, 300_000_000));
        assertEquals(4, c.snapshots(), "three warm-up snapshots left out");
        assertEquals(400 * MB, c.localBytesPerSecond(), 1);
        assertEquals(0.05, c.stallFixedSeconds(), 1e-6);
        assertEquals(200 * MB, c.stagingBytesPerSecond(), 1);
        assertEquals(2.0, c.compressionRatio(), 1e-6);
        assertEquals(SPREAD, c.stragglerSpread(), 1e-9, "the slowest over the median (of two: their mean)");
        assertEquals(0.3, c.fixedSeconds(), 1e-9);
    }

    @Test
    void tooFewSnapshotsIsAClearError() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Calibration.measure(history(100_000_000)));
        assertTrue(e.getMessage().contains("has 1 established snapshots") && e.getMessage().contains("at least 2"),
                e.getMessage());
        assertEquals(4, Calibration.measure(history(100_000_000, 200_000_000, 300_000_000, 400_000_000)).snapshots(),
                "too few to leave the warm-up out: all are used");
    }

    @Test
    void theStoreCurveRecoversItsSaturation() {
        double b1 = 300 * MB;
        double max = 900 * MB;
        List<StoreCurve.Point> pts = List.of(1, 2, 4, 8, 16).stream()
                .map(n -> new StoreCurve.Point(n, StoreCurve.bytesPerSecond(n, b1, max))).toList();
        StoreCurve curve = new StoreCurve(pts);
        assertEquals(b1, curve.singleWriterBytesPerSecond(), 1);
        assertEquals(max, curve.maxBytesPerSecond(), 100);
        assertTrue(curve.bytesPerSecond(1000) < max && curve.bytesPerSecond(1000) > 0.99 * max);
        StoreCurve linear = new StoreCurve(List.of(new StoreCurve.Point(1, 100), new StoreCurve.Point(2, 200)));
        assertTrue(Double.isInfinite(linear.maxBytesPerSecond()), "no saturation seen: no ceiling invented");
    }

    @Test
    void projectionScalesEachTierAndTheLawStaysTheFloor() {
        Calibration c = Calibration.measure(history(100_000_000, 300_000_000, 200_000_000, 400_000_000, 100_000_000,
                800_000_000, 300_000_000)).withStore(new StoreCurve(List.of(new StoreCurve.Point(1, 300 * MB),
                new StoreCurve.Point(4, 500 * MB))), 800 * MB);
        // 100 nodes x 10 GB, SSD 2 GB/s, storage 100 disks of 10 TB at 1 GB/s.
        FillTimeLaw law = new FillTimeLaw(1_000_000_000_000L, 1_000_000_000_000_000L, 10_000_000_000_000L, 1e9);
        Projection p = new Projection(c, 100, 10_000_000_000L, 2e9, Optional.of(law));
        assertEquals(5.0, p.idealStallSeconds(), 1e-9, "10 GB at 2 GB/s");
        // Capture reached 400/800 of the raw disk here: half the target SSD, 1 GB/s, times the spread.
        assertEquals(0.05 + 10.0 * SPREAD, p.stallSeconds(), 1e-6);
        assertEquals(10.0, p.idealEstablishedSeconds(), 1e-9, "1 TB over 100 disks at 1 GB/s");
        assertTrue(p.establishedSeconds() > p.idealEstablishedSeconds());
        assertEquals(c.fixedSeconds() + p.stallSeconds() + Math.max(p.stagingSeconds(), p.storeSeconds()) * SPREAD,
                p.establishedSeconds(), 1e-9);
        assertEquals(50.0, p.stagingSeconds(), 1e-6, "10 GB at 200 MB/s per node");
        // The store saturated at 643 MB/s here, 80% of the raw disk: so the target's 100 GB/s of disks give 80 GB/s.
        assertEquals(c.store().maxBytesPerSecond() / 800e6 * 100e9, p.storeCeiling(), 1e3);
        assertTrue(p.storeCeiling() < 100e9 && p.storeCeiling() > 79e9, "ceiling " + p.storeCeiling());
    }

    @Test
    void calibrationFilesRoundTripAndBadOnesAreOneLine() throws Exception {
        Calibration c = Calibration.measure(history(100_000_000, 300_000_000, 200_000_000, 400_000_000, 100_000_000))
                .withStore(new StoreCurve(List.of(new StoreCurve.Point(1, 300 * MB))), Double.NaN);
        Path f = tmp.resolve("cal.json");
        CalibrationJson.write(c, f);
        assertEquals(c, CalibrationJson.read(f));
        Files.writeString(f, "{not json");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> CalibrationJson.read(f)).getMessage()
                .contains("is not JSON"));
        var n = CalibrationJson.toJson(c);
        n.put("compressionRatio", "lots");
        Files.writeString(f, new ObjectMapper().writeValueAsString(n));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> CalibrationJson.read(f)).getMessage()
                .contains("'compressionRatio' must be a finite number"));
        n.put("compressionRatio", -1.0);
        Files.writeString(f, new ObjectMapper().writeValueAsString(n));
        assertThrows(IllegalArgumentException.class, () -> CalibrationJson.read(f));
        n.put("compressionRatio", 2.0).putArray("store");
        Files.writeString(f, new ObjectMapper().writeValueAsString(n));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> CalibrationJson.read(f)).getMessage()
                .contains("'store'"));
    }
}
