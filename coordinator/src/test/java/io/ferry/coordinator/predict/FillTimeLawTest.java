package io.ferry.coordinator.predict;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class FillTimeLawTest {
    @Test
    void idealTimeIsRatioTimesSingleDiskFill() {
        // 1 PB of RAM onto 10 PB of 4 TB SSDs writing 4 GB/s each.
        FillTimeLaw law = new FillTimeLaw(1_000_000_000_000_000L, 10_000_000_000_000_000L, 4_000_000_000_000L, 4e9);
        assertEquals(0.1, law.ratio(), 1e-12);
        assertEquals(1000.0, law.singleDiskFillSeconds(), 1e-9);
        assertEquals(100.0, law.idealSeconds(), 1e-9);
        assertEquals(2500.0, law.disks(), 1e-9);
    }

    @Test
    void idealTimeEqualsSizeOverAggregateBandwidth() {
        // The law is the aggregate-bandwidth bound written in planners' terms.
        FillTimeLaw law = new FillTimeLaw(300L << 40, 5L << 50, 2L << 40, 150e6);
        double aggregate = law.disks() * law.diskBytesPerSecond();
        assertEquals(law.checkpointBytes() / aggregate, law.idealSeconds(), 1e-6);
    }

    @Test
    void nonsenseIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new FillTimeLaw(0, 10, 1, 1));
        assertThrows(IllegalArgumentException.class, () -> new FillTimeLaw(1, 10, 1, 0));
        assertThrows(IllegalArgumentException.class, () -> new FillTimeLaw(1, 10, 20, 1));
    }
}
