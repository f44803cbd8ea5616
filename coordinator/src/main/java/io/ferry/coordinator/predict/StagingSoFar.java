package io.ferry.coordinator.predict;

import io.ferry.model.Event;

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

    public void report(Event.StagingProgress p) {
        byNode.merge(p.node(), p, (old, now) -> now.readBytes() >= old.readBytes() ? now : old);
    }

    /** The share (0..1) of the generation's {@code rawBytes} its nodes have read for staging. */
    public double readShare(long rawBytes) {
        if (rawBytes <= 0) {
            return 0;
        }
        long read = byNode.values().stream().mapToLong(Event.StagingProgress::readBytes).sum();
        return Math.min(1, (double) read / rawBytes);
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
}
