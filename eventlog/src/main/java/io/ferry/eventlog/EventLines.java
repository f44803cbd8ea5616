package io.ferry.eventlog;

import io.ferry.model.Event;
import io.ferry.model.Sizes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;
import org.slf4j.event.Level;

import java.util.Locale;

/**
 * One log line per event a process appends to the event log, on logger {@code io.ferry.events}:
 * what the agent captured and staged, what the coordinator established or rolled back, each
 * failure with its reason (never a stack trace: these are expected). The line carries the
 * event's job, generation, rank and node in the MDC ({@code job}, {@code generation},
 * {@code rank}, {@code node}; the node from the event, else from the caller's MDC). Levels: INFO
 * for progress, WARN for failures, DEBUG for requests and reports, TRACE for heartbeats.
 * Thread-safe; the MDC is restored before it returns.
 */
public final class EventLines {
    static final Logger LOG = LoggerFactory.getLogger("io.ferry.events");

    private EventLines() {}

    /** A line's level and text. */
    record Line(Level level, String text, long generation, int rank, String node) {}

    /** Logs {@code e}'s line, if its level is on. */
    public static void log(Event e) {
        Line l = line(e);
        if (!LOG.isEnabledForLevel(l.level())) {
            return;
        }
        String[] before = {MDC.get("job"), MDC.get("generation"), MDC.get("rank"), MDC.get("node")};
        try {
            MDC.put("job", e.job());
            putOrRemove("generation", l.generation() >= 0 ? Long.toString(l.generation()) : null);
            putOrRemove("rank", l.rank() >= 0 ? Integer.toString(l.rank()) : null);
            putOrRemove("node", l.node() != null ? l.node() : before[3]);
            LOG.atLevel(l.level()).log(oneLine(l.text()));
        } finally {
            putOrRemove("job", before[0]);
            putOrRemove("generation", before[1]);
            putOrRemove("rank", before[2]);
            putOrRemove("node", before[3]);
        }
    }

    /** {@code text} on one line: a reason taken from an exception may hold line breaks (Jackson's do). */
    public static String oneLine(String text) {
        return text == null ? "" : text.replaceAll("\\s*\\R\\s*", " ");
    }

    private static void putOrRemove(String key, String value) {
        if (value == null) {
            MDC.remove(key);
        } else {
            MDC.put(key, value);
        }
    }

    // Events are dispatched one by one (sealed interface, no pattern switch in Java 17); an event
    // type added later logs at DEBUG by its record text until it gets a line of its own here.
    static Line line(Event e) {
        if (e instanceof Event.ImageCaptured c) {
            return new Line(Level.INFO, "image captured: " + Sizes.format(c.bytes()) + " in " + secs(c.seconds()),
                    c.generation(), c.rank(), c.node());
        } else if (e instanceof Event.ImageStaged s) {
            return new Line(Level.INFO, "image staged on " + s.tier() + ": " + Sizes.format(s.rawBytes()) + " raw, "
                    + Sizes.format(s.storedBytes()) + " stored, in " + secs(s.seconds()), s.generation(), s.rank(),
                    null);
        } else if (e instanceof Event.SnapshotEstablished s) {
            return new Line(Level.INFO, "snapshot established on " + s.tier() + ", " + secs(s.secondsSinceRequest())
                    + " after its request", s.generation(), -1, null);
        } else if (e instanceof Event.RecoveryStarted r) {
            return new Line(Level.INFO, "rollback to generation " + r.generation() + ": " + r.cause(), r.generation(),
                    -1, null);
        } else if (e instanceof Event.ImagesRestored r) {
            return new Line(Level.INFO, "images restored: " + r.sources(), r.generation(), -1, r.node());
        } else if (e instanceof Event.PartnerCopied p) {
            return new Line(Level.INFO, "partner copy of ranks " + p.ranks() + " on " + p.partner() + ": "
                    + Sizes.format(p.bytes()) + " in " + secs(p.seconds()), p.generation(), -1, p.node());
        } else if (e instanceof Event.LauncherRequested l) {
            return new Line(Level.INFO,
                    "launch " + l.attempt() + " from generation " + l.generation() + ": " + l.cause(),
                    l.generation(), -1, null);
        } else if (e instanceof Event.JobPlaced p) {
            return new Line(Level.INFO, "placed " + p.placement() + ": " + p.reason(), -1, -1, null);
        } else if (e instanceof Event.JobFinished f) {
            return new Line(f.success() ? Level.INFO : Level.WARN, "job finished " + (f.success() ? "OK" : "FAILED")
                    + ": " + f.detail(), -1, -1, null);
        } else if (e instanceof Event.CaptureFailed f) {
            return new Line(Level.WARN, "capture failed: " + f.reason(), f.generation(), -1, null);
        } else if (e instanceof Event.StagingFailed f) {
            return new Line(Level.WARN, "staging failed: " + f.reason(), f.generation(), f.rank(), null);
        } else if (e instanceof Event.RestoreFailed f) {
            return new Line(Level.WARN, "restore failed" + (f.storeUnreachable() ? " (store unreachable)"
                    : f.provenBad() ? "" : " (not the data's fault: tried again)") + ": "
                    + f.reason(), f.generation(), -1, f.node());
        } else if (e instanceof Event.RankExited x) {
            return new Line(x.exitCode() == 0 ? Level.INFO : Level.WARN, "rank exited with " + x.exitCode(), -1,
                    x.rank(), null);
        } else if (e instanceof Event.CheckpointRequested c) {
            return new Line(Level.DEBUG, "checkpoint requested: " + c.why(), c.generation(), -1, null);
        } else if (e instanceof Event.StagingProgress p) {
            return new Line(Level.DEBUG,
                    "staging: " + Sizes.format(p.readBytes()) + " of " + Sizes.format(p.totalBytes())
                    + " read, " + Sizes.format(p.freshBytes()) + " new, " + Sizes.format(p.writtenBytes()) + " written",
                    p.generation(), -1, p.node());
        } else if (e instanceof Event.Heartbeat h) {
            return new Line(Level.TRACE, "heartbeat", -1, -1, h.node());
        }
        return new Line(Level.DEBUG, e.toString(), -1, -1, null);
    }

    private static String secs(double s) {
        return String.format(Locale.ROOT, "%.2f s", s);
    }
}
