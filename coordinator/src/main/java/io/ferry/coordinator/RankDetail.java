package io.ferry.coordinator;

import io.ferry.coordinator.predict.Stats;

import java.util.Arrays;
import java.util.BitSet;

/**
 * A generation's ranks: which were captured and staged, and, while it is in flight, each rank's
 * node, bytes, stall and staging seconds. Sized for a million ranks: the detail sits in flat arrays
 * indexed by rank (captured and staged as bit sets, a rank's node as an index into the job's
 * {@link NodeNames}). Once the generation is established or failed ({@link #compact()}), the
 * per-rank detail is dropped and only what the status, dashboard and predictor read is kept:
 * counts, per node its bytes and staging seconds, and the stalls' straggler spread. Owned by its
 * {@link GenerationView}; not thread-safe.
 */
final class RankDetail {
    int capturedCount;
    int stagedCount;
    // Package-private: FoldSnapshot carries them. A bit set that covers every rank 0..n-1 is dropped
    // when compacted: null then means "all of the first count ranks".
    BitSet captured = new BitSet();
    BitSet staged = new BitSet();
    /** Each captured rank's node (index into the job's names), bytes and stall; staging seconds of each staged rank. */
    int[] nodeOf = new int[0];
    long[] bytes = new long[0];
    double[] stall = new double[0];
    double[] staging = new double[0];

    // What is kept once compacted: per node (indexed as the job's names), and the stalls' spread.
    long[] bytesByNode;
    double[] stagingByNode;
    BitSet nodesCaptured;
    double stragglerSpread = 1;

    /** Sized for {@code ranks} ranks (0 where {@link FoldSnapshot} sets the arrays). */
    RankDetail(int ranks) {
        grow(Math.max(0, ranks));
    }

    private void grow(int ranks) {
        if (ranks > nodeOf.length) {
            int n = Math.max(ranks, nodeOf.length + (nodeOf.length >> 1));
            int old = nodeOf.length;
            nodeOf = Arrays.copyOf(nodeOf, n);
            Arrays.fill(nodeOf, old, n, -1);
            bytes = Arrays.copyOf(bytes, n);
            stall = Arrays.copyOf(stall, n);
            staging = Arrays.copyOf(staging, n);
        }
    }

    boolean compacted() {
        return bytesByNode != null;
    }

    /** Whether {@code rank}'s capture was folded (once compacted with every rank captured: all were). */
    boolean hasCaptured(int rank) {
        return captured == null || captured.get(rank);
    }

    /**
     * Folds a rank's capture on the node of index {@code node}; a repeated one (a producer's retry, a
     * replay) replaces the rank's detail. Returns what it adds to the generation's raw bytes: 0 for a
     * repeat of the same size, and for any repeat once compacted (only totals are left then).
     */
    long captured(int rank, int node, long rankBytes, double seconds) {
        if (compacted()) {
            if (hasCaptured(rank)) {
                return 0;
            }
            captured.set(rank);
            capturedCount++;
            bytesByNode = addAt(bytesByNode, node, rankBytes);
            nodesCaptured.set(node);
            return rankBytes;
        }
        grow(rank + 1);
        long before = 0;
        if (!captured.get(rank)) {
            captured.set(rank);
            capturedCount++;
        } else {
            before = bytes[rank];
        }
        nodeOf[rank] = node;
        bytes[rank] = rankBytes;
        stall[rank] = seconds;
        return rankBytes - before;
    }

    /**
     * Folds a rank's staging; whether it is the rank's first (a repeat, or a restaging after an
     * agent's crash, wrote nothing the first did not: its bytes are not counted again).
     */
    boolean staged(int rank, double seconds) {
        if (compacted()) {
            if (staged != null && !staged.get(rank)) {
                staged.set(rank);
                stagedCount++;
                return true;
            }
            return false;
        }
        grow(rank + 1);
        boolean first = !staged.get(rank);
        if (first) {
            staged.set(rank);
            stagedCount++;
        }
        staging[rank] = seconds;
        return first;
    }

    /** Drops the per-rank detail, keeping the per-node totals (over {@code nodes} names) and the stalls' spread. Idempotent. */
    void compact(int nodes) {
        if (compacted()) {
            return;
        }
        long[] b = new long[nodes];
        double[] st = new double[nodes];
        BitSet seen = new BitSet(nodes);
        for (int r = captured.nextSetBit(0); r >= 0; r = captured.nextSetBit(r + 1)) {
            seen.set(nodeOf[r]);
            b[nodeOf[r]] += bytes[r];
            if (staged.get(r)) {
                st[nodeOf[r]] += staging[r];
            }
        }
        stragglerSpread = Stats.stragglerSpread(stalls());
        bytesByNode = b;
        stagingByNode = st;
        nodesCaptured = seen;
        nodeOf = null;
        bytes = null;
        stall = null;
        staging = null;
        captured = everyRankUpTo(captured, capturedCount);
        staged = everyRankUpTo(staged, stagedCount);
    }

    private static BitSet everyRankUpTo(BitSet s, int count) {
        return s.nextClearBit(0) >= count ? null : s;
    }

    private static long[] addAt(long[] a, int i, long v) {
        long[] out = i < a.length ? a : Arrays.copyOf(a, i + 1);
        out[i] += v;
        return out;
    }

    /**
     * The ranks of {@code ranks} not yet in {@code done} (captured while OPEN, staged once CAPTURED);
     * none where {@code done} is null: compacted with every rank done.
     */
    static BitSet missing(BitSet done, int ranks) {
        BitSet missing = new BitSet();
        if (done != null) {
            missing.set(0, ranks);
            missing.andNot(done);
        }
        return missing;
    }

    /** Raw bytes of the node of index {@code node} (-1: none). */
    long bytesOn(int node) {
        if (node < 0) {
            return 0;
        }
        if (compacted()) {
            return node < bytesByNode.length ? bytesByNode[node] : 0;
        }
        long sum = 0;
        for (int r = captured.nextSetBit(0); r >= 0; r = captured.nextSetBit(r + 1)) {
            if (nodeOf[r] == node) {
                sum += bytes[r];
            }
        }
        return sum;
    }

    /**
     * Per node index (below {@code nodes}), the bytes its captured ranks hold where any of them is not staged
     * yet, else 0; in one pass over the ranks. For a generation in flight (none once compacted: it is settled).
     */
    long[] unstagedNodesBytes(int nodes) {
        long[] out = new long[nodes];
        if (compacted()) {
            return out;
        }
        boolean[] waiting = new boolean[nodes];
        for (int r = captured.nextSetBit(0); r >= 0; r = captured.nextSetBit(r + 1)) {
            int n = nodeOf[r];
            if (n >= 0 && n < nodes) {
                out[n] += bytes[r];
                waiting[n] |= !staged.get(r);
            }
        }
        for (int n = 0; n < nodes; n++) {
            if (!waiting[n]) {
                out[n] = 0;
            }
        }
        return out;
    }

    /** The indexes of the nodes that captured ranks. */
    BitSet nodes() {
        if (compacted()) {
            return (BitSet) nodesCaptured.clone();
        }
        BitSet out = new BitSet();
        for (int r = captured.nextSetBit(0); r >= 0; r = captured.nextSetBit(r + 1)) {
            out.set(nodeOf[r]);
        }
        return out;
    }

    /** Seconds the node of index {@code node} (-1: none) spent staging: its ranks' shares. */
    double stagingSecondsOn(int node) {
        if (node < 0) {
            return 0;
        }
        if (compacted()) {
            return node < stagingByNode.length ? stagingByNode[node] : 0;
        }
        double sum = 0;
        for (int r = captured.nextSetBit(0); r >= 0; r = captured.nextSetBit(r + 1)) {
            if (nodeOf[r] == node && staged.get(r)) {
                sum += staging[r];
            }
        }
        return sum;
    }

    /** Each captured rank's stall, in rank order; empty once compacted. */
    double[] stalls() {
        if (compacted()) {
            return new double[0];
        }
        double[] out = new double[capturedCount];
        int i = 0;
        for (int r = captured.nextSetBit(0); r >= 0; r = captured.nextSetBit(r + 1)) {
            out[i++] = stall[r];
        }
        return out;
    }

    /** The slowest rank's stall over the median rank's (1 when fewer than two ranks or no stall). */
    double stragglerSpread() {
        return compacted() ? stragglerSpread : Stats.stragglerSpread(stalls());
    }
}
