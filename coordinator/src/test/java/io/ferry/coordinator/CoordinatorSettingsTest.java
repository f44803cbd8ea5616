package io.ferry.coordinator;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CoordinatorSettingsTest {
    @Test
    void theSnapshotIntervalDefaultsTo200000EventsAndZeroTurnsSnapshotsOff() {
        assertEquals(200_000, CoordinatorSettings.DEFAULT.snapshotEvery());
        assertEquals(0, CoordinatorSettings.of(Map.of("coordinator.snapshot-every", "0")).snapshotEvery());
        assertEquals(5000, CoordinatorSettings.of(Map.of("coordinator.snapshot-every", " 5000 ")).snapshotEvery());
    }

    @Test
    void aNegativeOrNonNumericIntervalFailsNamingTheKey() {
        for (String bad : new String[] {"-1", "lots", "200k", "1.5", ""}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> CoordinatorSettings.of(Map.of("coordinator.snapshot-every", bad)), bad);
            assertTrue(e.getMessage()
                    .startsWith("configuration key 'coordinator.snapshot-every': invalid value '" + bad + "'"),
                    e.getMessage());
        }
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> CoordinatorSettings.of(Map.of("coordinator.snapshot-every", "-1"))).getMessage()
                        .contains("must be within 0.."));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> CoordinatorSettings.of(Map.of("coordinator.snapshot-every", "lots"))).getMessage()
                        .contains("not a whole number"));
    }

    @Test
    void anUnknownCoordinatorKeyIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CoordinatorSettings.of(Map.of("coordinator.snapshot-evry", "10")));
        assertTrue(e.getMessage().contains("coordinator.snapshot-evry"), e.getMessage());
    }
}
