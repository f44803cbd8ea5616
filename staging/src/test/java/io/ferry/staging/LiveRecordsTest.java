package io.ferry.staging;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class LiveRecordsTest {
    @Test
    void aRecordNamedByManyManifestsIsHeldOnce() {
        LiveRecords live = new LiveRecords();
        for (int generation = 0; generation < 1000; generation++) {
            live.add(4096, 700); // the same deduplicated record, named by every generation
            live.add(8 + generation * 100L, 90); // and one record of its own
        }
        assertEquals(1001, live.count());
        assertEquals(700 + 1000 * 90L, live.bytes());
        assertEquals(700, live.lengthAt(4096));
        assertEquals(90, live.lengthAt(8 + 999 * 100L));
        assertEquals(-1, live.lengthAt(9));
    }

    @Test
    void offsetsUpTo4GiBAreHeldAndBeyondRefused() {
        LiveRecords live = new LiveRecords();
        live.add(0xffff_ffffL, 1);
        assertEquals(1, live.lengthAt(0xffff_ffffL));
        assertThrows(IllegalArgumentException.class, () -> live.add(1L << 32, 1));
        assertThrows(IllegalArgumentException.class, () -> live.add(8, 0));
    }
}
