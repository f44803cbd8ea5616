package io.ferry.coordinator;

import io.ferry.model.Event;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** When what the coordinator reads from the heartbeats topic counts from. */
class HeartbeatsTest {
    private static final long TIMEOUT = 10_000;
    private static final long NOW = 1_000_000;
    private final Event.StagingProgress report = new Event.StagingProgress("j", 3, "n0", 25, 100, 5, 5);

    @Test
    void aStagingReportCountsFromWhenTheBrokerLoggedItNotWhenThisLoopGotToIt() {
        assertEquals(NOW - 150, Heartbeats.countsFrom(report, NOW - 150, NOW, TIMEOUT));
        assertEquals(NOW + 40, Heartbeats.countsFrom(report, NOW + 40, NOW, TIMEOUT),
                "a broker's clock a little ahead");
    }

    @Test
    void aStampFurtherOffThanAHeartbeatTimeoutIsNotBelievedAndTheReportCountsAsRead() {
        assertEquals(NOW, Heartbeats.countsFrom(report, NOW - TIMEOUT - 1, NOW, TIMEOUT));
        assertEquals(NOW, Heartbeats.countsFrom(report, NOW + TIMEOUT + 1, NOW, TIMEOUT));
        assertEquals(NOW, Heartbeats.countsFrom(report, 0, NOW, TIMEOUT));
    }

    @Test
    void aHeartbeatCountsFromWhenItIsReadWhateverItsStamp() {
        Event.Heartbeat beat = new Event.Heartbeat("j", "n0");
        assertEquals(NOW, Heartbeats.countsFrom(beat, NOW - 150, NOW, TIMEOUT));
    }
}
