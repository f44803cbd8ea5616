package io.ferry.coordinator.predict;

import io.ferry.model.Event;
import io.ferry.model.EventCodec;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.Arrays;
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
    /**
     * Each node's reports as points (bytes read, then when the report came on the coordinator's
     * clock), oldest first: a node reports each tenth once, and once as its reading begins, so
     * there are at most {@link #POINTS} (more from a misbehaving agent are not kept).
     */
    private final Map<String, long[]> pointsByNode = new HashMap<>();
    static final int POINTS = 16;
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
        long[] points = pointsByNode.getOrDefault(p.node(), new long[0]);
        if (points.length < 2 * POINTS) {
            points = Arrays.copyOf(points, points.length + 2);
            points[points.length - 2] = p.readBytes();
            points[points.length - 1] = atMillis;
            pointsByNode.put(p.node(), points);
        }
    }

    /**
     * Seconds until the slowest node has read the rest of its bytes, or NaN until every node of
     * {@code nodes} has a rate: the rate measured while staging, beside the one the history gives.
     * A job's snapshot is its slowest node's. A node that has read all it holds has nothing left.
     * The others read at the rate of the newer half of their reports, never counting the first
     * tenth: a push's first tenth is its slowest (its workers start, the last snapshot's blobs are
     * looked up for the first time), and measured on the multi-node job of
     * {@code benchmarks/run-accuracy-netns.sh} it made the rest look up to 4.7 times longer than
     * it took. So a node has a rate from its second tenth on, its rest counted from its newest
     * report to {@code nowMillis}.
     */
    public double secondsLeft(int nodes, long nowMillis) {
        if (byNode.size() < Math.max(1, nodes)) {
            return Double.NaN;
        }
        double left = 0;
        for (Map.Entry<String, Event.StagingProgress> e : byNode.entrySet()) {
            Event.StagingProgress newest = e.getValue();
            if (newest.readBytes() >= newest.totalBytes()) {
                continue;
            }
            long[] points = pointsByNode.get(e.getKey());
            double rate = rate(points);
            if (Double.isNaN(rate)) {
                return Double.NaN;
            }
            double since = Math.max(0, (nowMillis - points[points.length - 1]) / 1000.0);
            left = Math.max(left, Math.max(0, (newest.totalBytes() - newest.readBytes()) / rate - since));
        }
        return left;
    }

    /**
     * A node's bytes read a second from its report points (NaN before its second tenth): from the
     * middle of them to the newest, the first tenth left out ({@code points[0]} is the report as its
     * reading began where the agent sends one).
     */
    private static double rate(long[] points) {
        int last = points.length / 2 - 1;
        int from = Math.max(points[0] == 0 ? 1 : 0, last / 2);
        long read = points[2 * last] - points[2 * from];
        long millis = points[2 * last + 1] - points[2 * from + 1];
        return from < last && read > 0 && millis > 0 ? read / (millis / 1000.0) : Double.NaN;
    }

    /** The bytes {@code node} has read for staging, by its newest report (0: none yet). */
    public long readBy(String node) {
        Event.StagingProgress p = byNode.get(node);
        return p == null ? 0 : p.readBytes();
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
     * Writes what it folded, for the coordinator's snapshot of its state: each node's newest report
     * (encoded as an event) and its report points.
     */
    public void writeTo(DataOutputStream out) throws IOException {
        out.writeInt(byNode.size());
        for (Map.Entry<String, Event.StagingProgress> e : byNode.entrySet()) {
            writeEvent(out, e.getValue());
            long[] points = pointsByNode.get(e.getKey());
            out.writeInt(points.length);
            for (long v : points) {
                out.writeLong(v);
            }
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
            int count = in.readInt();
            if (count < 2 || count > 2 * POINTS || count % 2 != 0) {
                throw new IllegalArgumentException("a node's staging reports as " + count + " numbers");
            }
            long[] points = new long[count];
            for (int k = 0; k < count; k++) {
                points[k] = in.readLong();
            }
            s.byNode.put(newest.node(), newest);
            s.pointsByNode.put(newest.node(), points);
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
