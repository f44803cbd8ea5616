package io.ferry.coordinator.predict;

import io.ferry.model.Event;
import io.ferry.model.EventCodec;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

/**
 * What a generation's nodes have reported of their staging so far ({@link Event.StagingProgress},
 * the newest of each node): how much of the generation's raw bytes has been read, and the bytes
 * the snapshot will write, extrapolated from what the pushes found new so far. A node's share of
 * new bytes is taken as uniform over its images: each tenth read says more about the rest than
 * the previous snapshot does when the data changes. Not thread-safe (the coordinator's fold).
 */
public final class StagingSoFar {
    /** The shares of bytes read at which a snapshot is forecast again, after the forecast at capture. */
    public static final double[] MARKS = {0.25, 0.5, 0.75};
    private final Map<String, Event.StagingProgress> byNode = new HashMap<>();
    /** Each node's first report and when it came (the coordinator's clock), and when its newest came. */
    private final Map<String, Event.StagingProgress> firstByNode = new HashMap<>();
    private final Map<String, long[]> timesByNode = new HashMap<>();
    /** The newest reports' read bytes, summed over the nodes. */
    private long readTotal;

    /** Folds a node's report, arrived at {@code atMillis} on the coordinator's clock. */
    public void report(Event.StagingProgress p, long atMillis) {
        Event.StagingProgress old = byNode.get(p.node());
        if (old != null && old.readBytes() > p.readBytes()) {
            return; // an older report arriving late
        }
        byNode.put(p.node(), p);
        readTotal += p.readBytes() - (old == null ? 0 : old.readBytes()); // kept as it goes: asked at every report
        firstByNode.putIfAbsent(p.node(), p);
        long[] t = timesByNode.computeIfAbsent(p.node(), n -> new long[]{atMillis, atMillis});
        t[1] = atMillis;
    }

    /**
     * Seconds until the slowest reporting node has read the rest of its bytes, at the rate it read
     * between its first report and its newest (so the push's start, listing files and reading the
     * last snapshot's manifest, is not counted as reading), or NaN until every node of
     * {@code nodes} has reported twice: the rate measured while staging, beside the one the
     * history gives. A job's snapshot is its slowest node's.
     */
    public double secondsLeft(int nodes, long nowMillis) {
        if (byNode.size() < Math.max(1, nodes)) {
            return Double.NaN;
        }
        double left = 0;
        for (Map.Entry<String, Event.StagingProgress> e : byNode.entrySet()) {
            Event.StagingProgress first = firstByNode.get(e.getKey());
            long[] t = timesByNode.get(e.getKey());
            long read = e.getValue().readBytes() - first.readBytes();
            if (read <= 0 || t[1] <= t[0]) {
                return Double.NaN;
            }
            double rate = read / ((t[1] - t[0]) / 1000.0);
            double since = Math.max(0, (nowMillis - t[1]) / 1000.0);
            left = Math.max(left, Math.max(0, (e.getValue().totalBytes() - e.getValue().readBytes()) / rate - since));
        }
        return left;
    }

    /** The share (0..1) of the generation's {@code rawBytes} its nodes have read for staging. */
    public double readShare(long rawBytes) {
        if (rawBytes <= 0) {
            return 0;
        }
        return Math.min(1, (double) readTotal / rawBytes);
    }

    /**
     * The bytes the generation will write to the store: each reporting node's written so far,
     * scaled from what it read to all it holds; the raw bytes of nodes not heard from yet at the
     * reporting nodes' written share (or {@code fallbackShare} when none has read anything).
     */
    public long writtenEstimate(long rawBytes, double fallbackShare) {
        double written = 0;
        long read = 0;
        long writtenSoFar = 0;
        long covered = 0;
        for (Event.StagingProgress p : byNode.values()) {
            if (p.readBytes() > 0) {
                written += (double) p.writtenBytes() * p.totalBytes() / p.readBytes();
                read += p.readBytes();
                writtenSoFar += p.writtenBytes();
                covered += p.totalBytes();
            }
        }
        double share = read > 0 ? (double) writtenSoFar / read : fallbackShare;
        written += Math.max(0, rawBytes - covered) * share;
        return Math.round(written);
    }

    /**
     * Writes what it folded, for the coordinator's snapshot of its state: each node's first and
     * newest report (encoded as events) and their times.
     */
    public void writeTo(DataOutputStream out) throws IOException {
        out.writeInt(byNode.size());
        for (Map.Entry<String, Event.StagingProgress> e : byNode.entrySet()) {
            writeEvent(out, e.getValue());
            writeEvent(out, firstByNode.get(e.getKey()));
            long[] t = timesByNode.get(e.getKey());
            out.writeLong(t[0]);
            out.writeLong(t[1]);
        }
        out.writeLong(readTotal);
    }

    /** Reads what {@link #writeTo} wrote; {@link IllegalArgumentException} for what it did not. */
    public static StagingSoFar readFrom(DataInputStream in) throws IOException {
        StagingSoFar s = new StagingSoFar();
        int n = in.readInt();
        if (n < 0 || (long) n * 24 > in.available()) {
            throw new IllegalArgumentException("staging progress of " + n + " nodes in " + in.available() + " bytes");
        }
        for (int i = 0; i < n; i++) {
            Event.StagingProgress newest = readEvent(in);
            s.byNode.put(newest.node(), newest);
            s.firstByNode.put(newest.node(), readEvent(in));
            s.timesByNode.put(newest.node(), new long[]{in.readLong(), in.readLong()});
        }
        s.readTotal = in.readLong();
        return s;
    }

    private static void writeEvent(DataOutputStream out, Event.StagingProgress p) throws IOException {
        byte[] b = EventCodec.encode(p);
        out.writeInt(b.length);
        out.write(b);
    }

    private static Event.StagingProgress readEvent(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > in.available()) {
            throw new IllegalArgumentException("a staging report of " + n + " bytes in " + in.available());
        }
        byte[] b = new byte[n];
        in.readFully(b);
        if (EventCodec.decode(b) instanceof Event.StagingProgress p) {
            return p;
        }
        throw new IllegalArgumentException("not a staging report where one belongs");
    }
}
