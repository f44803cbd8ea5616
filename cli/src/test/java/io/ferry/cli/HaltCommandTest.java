package io.ferry.cli;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HaltCommandTest {
    private static final Instant NOW = Instant.parse("2026-11-23T16:00:00Z");

    @Test
    void theDeadlineComesFromSecondsOrATimeAndDefaultsToFiveMinutes() {
        assertEquals(NOW.plus(Duration.ofMinutes(5)), HaltCommand.deadline(null, null, NOW));
        assertEquals(NOW.plusSeconds(90), HaltCommand.deadline("90s", null, NOW));
        assertEquals(Instant.parse("2026-11-23T18:00:00Z"), HaltCommand.deadline(null, "2026-11-23T18:00:00Z", NOW));
        assertTrue(HaltCommand.deadline(null, "2099-01-01T00:00", NOW).isAfter(NOW), "a local time");
    }

    @Test
    void badDeadlinesAreRefusedNamingTheOption() {
        assertEquals("give --seconds or --before, not both", message("10s", "2026-11-23T18:00:00Z"));
        assertTrue(message(null, "2026-11-23T15:00:00Z").contains("is already past"));
        assertTrue(message(null, "six o'clock").startsWith("--before: not a time"));
        assertTrue(message("0s", null).startsWith("--seconds must be positive"));
    }

    private static String message(String seconds, String before) {
        return assertThrows(IllegalArgumentException.class, () -> HaltCommand.deadline(seconds, before, NOW))
                .getMessage();
    }
}
