package io.ferry.coordinator;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.BitSet;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A job's newest restarts, folded from the log: each rollback ({@code RecoveryStarted}) and each
 * launch that resumes from a snapshot ({@code LauncherRequested} of a generation), with how many
 * ranks came from each tier (local cache, partner node, remote store), when the last node
 * restored, and the nodes that could not. Bounded: the newest {@link #KEPT}, and per restart one
 * tally per tier, one source per node and a bit per rank, so a job of 10,000 nodes that restarts every hour
 * holds a few hundred kilobytes here, not a map per rank. Not thread-safe (owned by its
 * {@link JobView}).
 */
public final class RestartHistory {
    /** Restarts kept, the newest. */
    public static final int KEPT = 16;

    /** One restart; the tallies grow as nodes report. */
    public static final class Restart {
        final long generation;
        final String cause;
        final long startedAtMillis;
        long lastRestoredAtMillis;
        final Map<String, Integer> ranksBySource = new TreeMap<>();
        /** Each node's source: its ranks' tier, or "mixed" when they came from several. */
        final Map<String, String> sourceByNode = new TreeMap<>();
        final Map<String, String> failedNodes = new TreeMap<>();
        /** Ranks counted already: a bit each, so a job of 10,000 ranks spends 1.25 KB per restart. */
        final BitSet counted = new BitSet();

        Restart(long generation, String cause, long startedAtMillis) {
            this.generation = generation;
            this.cause = cause;
            this.startedAtMillis = startedAtMillis;
        }

        public long generation() {
            return generation;
        }

        public String cause() {
            return cause;
        }

        public long startedAtMillis() {
            return startedAtMillis;
        }

        /** Seconds from the start until the newest node restored, or NaN before any did. */
        public double secondsToRestored() {
            return lastRestoredAtMillis > 0 ? Math.max(0, lastRestoredAtMillis - startedAtMillis) / 1000.0 : Double.NaN;
        }

        /** Ranks restored from each tier (local, partner, remote), in name order. */
        public Map<String, Integer> ranksBySource() {
            return Collections.unmodifiableMap(ranksBySource);
        }

        /** Each restored node's tier, or "mixed". */
        public Map<String, String> sourceByNode() {
            return Collections.unmodifiableMap(sourceByNode);
        }

        /** Nodes that could not restore, and why. */
        public Map<String, String> failedNodes() {
            return Collections.unmodifiableMap(failedNodes);
        }

        public int restoredRanks() {
            return ranksBySource.values().stream().mapToInt(Integer::intValue).sum();
        }
    }

    final ArrayDeque<Restart> restarts = new ArrayDeque<>();

    void started(long generation, String cause, long atMillis) {
        restarts.addLast(new Restart(generation, cause, atMillis));
        while (restarts.size() > KEPT) {
            restarts.removeFirst();
        }
    }

    /**
     * The site's launcher was asked to start the ranks from {@code generation}: a restart of its
     * own (a new allocation resuming), unless it carries out the rollback just started.
     */
    void launched(long generation, String cause, long atMillis) {
        Restart newest = restarts.peekLast();
        if (newest != null && newest.generation == generation && newest.counted.isEmpty()
                && newest.failedNodes.isEmpty()) {
            return;
        }
        started(generation, cause, atMillis);
    }

    /** A node restored {@code generation}: counted in the newest restart of that generation. */
    void restored(long generation, String node, Map<Integer, String> sources, long atMillis) {
        Restart r = newestOf(generation);
        if (r == null || sources.isEmpty()) {
            return;
        }
        String nodeSource = r.sourceByNode.get(node);
        for (Map.Entry<Integer, String> e : sources.entrySet()) {
            if (e.getKey() < 0 || r.counted.get(e.getKey())) {
                continue; // a repeated report (a re-sent event) counts once
            }
            r.counted.set(e.getKey());
            r.ranksBySource.merge(e.getValue(), 1, Integer::sum);
            nodeSource = nodeSource == null || nodeSource.equals(e.getValue()) ? e.getValue() : "mixed";
        }
        if (nodeSource == null) {
            return;
        }
        r.sourceByNode.put(node, nodeSource);
        r.failedNodes.remove(node);
        r.lastRestoredAtMillis = Math.max(r.lastRestoredAtMillis, atMillis);
    }

    void failed(long generation, String node, String reason) {
        Restart r = newestOf(generation);
        if (r != null && !r.sourceByNode.containsKey(node)) {
            r.failedNodes.put(node, reason);
        }
    }

    private Restart newestOf(long generation) {
        var it = restarts.descendingIterator();
        while (it.hasNext()) {
            Restart r = it.next();
            if (r.generation == generation) {
                return r;
            }
        }
        return null;
    }

    /** Writes the kept restarts for a {@link FoldSnapshot}. */
    void writeTo(DataOutputStream out) throws IOException {
        out.writeInt(restarts.size());
        for (Restart r : restarts) {
            out.writeLong(r.generation);
            SnapshotData.writeString(out, r.cause);
            out.writeLong(r.startedAtMillis);
            out.writeLong(r.lastRestoredAtMillis);
            SnapshotData.writeMap(out, r.ranksBySource, (k, v) -> SnapshotData.writeString(out, k),
                    (k, v) -> out.writeInt(v));
            SnapshotData.writeMap(out, r.sourceByNode, (k, v) -> SnapshotData.writeString(out, k),
                    (k, v) -> SnapshotData.writeString(out, v));
            SnapshotData.writeMap(out, r.failedNodes, (k, v) -> SnapshotData.writeString(out, k),
                    (k, v) -> SnapshotData.writeString(out, v));
            SnapshotData.writeBits(out, r.counted);
        }
    }

    /** Reads what {@link #writeTo} wrote into this empty history. */
    void readFrom(DataInputStream in) throws IOException {
        for (int n = SnapshotData.count(in, 40); n > 0; n--) {
            Restart r = new Restart(in.readLong(), SnapshotData.readString(in), in.readLong());
            r.lastRestoredAtMillis = in.readLong();
            SnapshotData.readMap(in, 8, () -> r.ranksBySource.put(SnapshotData.readString(in), in.readInt()));
            SnapshotData.readMap(in, 8, () -> r.sourceByNode.put(SnapshotData.readString(in),
                    SnapshotData.readString(in)));
            SnapshotData.readMap(in, 8, () -> r.failedNodes.put(SnapshotData.readString(in),
                    SnapshotData.readString(in)));
            BitSet counted = SnapshotData.readBits(in);
            if (counted != null) {
                r.counted.or(counted);
            }
            restarts.addLast(r);
        }
    }

    /** The kept restarts, oldest first. */
    public List<Restart> all() {
        return List.copyOf(restarts);
    }
}
