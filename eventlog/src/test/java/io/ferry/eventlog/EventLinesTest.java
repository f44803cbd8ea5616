package io.ferry.eventlog;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.ferry.model.Event;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;
import org.slf4j.event.Level;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class EventLinesTest {
    @Test
    void progressIsInfoFailuresAreWarnRequestsDebugAndHeartbeatsTrace() {
        assertEquals(Level.INFO, EventLines.line(new Event.ImageCaptured("j", 3, 1, "n1", 4096, 0.5)).level());
        assertEquals(Level.INFO, EventLines.line(new Event.SnapshotEstablished("j", 3, "remote", 2.0)).level());
        assertEquals(Level.INFO, EventLines.line(new Event.RecoveryStarted("j", 2, "rank 1 exited with 9")).level());
        assertEquals(Level.WARN, EventLines.line(new Event.StagingFailed("j", 3, 1, "store down")).level());
        assertEquals(Level.WARN, EventLines.line(new Event.CaptureFailed("j", 3, "rank 0 timed out")).level());
        assertEquals(Level.WARN, EventLines.line(new Event.RankExited("j", 1, 9)).level());
        assertEquals(Level.INFO, EventLines.line(new Event.RankExited("j", 1, 0)).level());
        assertEquals(Level.DEBUG, EventLines.line(new Event.CheckpointRequested("j", 4, "interval")).level());
        assertEquals(Level.TRACE, EventLines.line(new Event.Heartbeat("j", "n1")).level());
        assertEquals(Level.DEBUG, EventLines.line(new Event.PeerAddress("j", "n1", "127.0.0.1:1")).level(),
                "an event without a line of its own");
    }

    @Test
    void aLineCarriesJobGenerationRankAndNodeInTheMdcAndLeavesTheCallersMdcAsItWas() {
        Logger logger = (Logger) EventLines.LOG;
        ListAppender<ILoggingEvent> seen = new ListAppender<>();
        seen.start();
        logger.addAppender(seen);
        ch.qos.logback.classic.Level before = logger.getLevel();
        logger.setLevel(ch.qos.logback.classic.Level.INFO);
        try {
            MDC.put("node", "n7");
            EventLines.log(new Event.StagingFailed("sim", 3, 2, "store s3://b is down\n at [Source: x]"));
            EventLines.log(new Event.ImageCaptured("sim", 4, 0, "n1", 1 << 20, 0.25));
            EventLines.log(new Event.CheckpointRequested("sim", 5, "interval")); // DEBUG: off
            assertEquals(2, seen.list.size(), seen.list.toString());
            ILoggingEvent failed = seen.list.get(0);
            assertEquals("staging failed: store s3://b is down at [Source: x]", failed.getFormattedMessage(),
                    "one line");
            assertEquals(Map.of("job", "sim", "generation", "3", "rank", "2", "node", "n7"),
                    failed.getMDCPropertyMap());
            assertNull(failed.getThrowableProxy(), "an expected failure carries no stack trace");
            ILoggingEvent captured = seen.list.get(1);
            assertEquals("n1", captured.getMDCPropertyMap().get("node"), "the event's own node first");
            assertTrue(captured.getFormattedMessage().startsWith("image captured: 1.0 MiB in 0.25 s"),
                    captured.getFormattedMessage());
            assertEquals("n7", MDC.get("node"));
            assertNull(MDC.get("job"));
            assertFalse(MDC.getCopyOfContextMap().containsKey("generation"));
        } finally {
            MDC.clear();
            logger.setLevel(before);
            logger.detachAppender(seen);
        }
    }
}
