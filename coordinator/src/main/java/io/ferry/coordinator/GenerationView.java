package io.ferry.coordinator;

import io.ferry.coordinator.predict.StagingMarks;
import io.ferry.coordinator.predict.StagingSoFar;
import io.ferry.coordinator.predict.Stats;
import io.ferry.model.Event;
import io.ferry.model.Placement;

import java.util.Arrays;
import java.util.BitSet;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.Optional;
import java.util.Set;

/**
 * What the log says about one generation of one job. Mutable, owned by {@link Jobs}; not thread-safe.
 *
 * <p>Sized for a million ranks: while the generation is in flight its per-rank detail sits in
 * flat arrays indexed by rank (which ranks captured and staged as bit sets, each rank's node as
 * an index into the job's {@link NodeNames}, its bytes, stall and staging seconds). Once it is
 * established or failed ({@link #compact()}), the per-rank detail is dropped and only what
 * the status, dashboard and predictor read is kept: counts, and per node its bytes and staging
 * seconds, and the stalls' straggler spread.
 */
public final class GenerationView {
    /** Snapshot states (DESIGN.md): OPEN -> CAPTURED -> ESTABLISHED, or FAILED. */
    public enum State { OPEN, CAPTURED, ESTABLISHED, FAILED }

    final long generation;
    State state = State.OPEN;
    final NodeNames names;
    int capturedCount;
    int stagedCount;
    long rawBytes;
    long storedBytes;
    double maxStallSeconds;
    double secondsToEstablished = Double.NaN;
    String failure = "";
    String stagingProblem = "";
    /** Why a node could not restore this generation (it is then never chosen again), or empty. */
    String restoreFailure = "";
    long requestedAtMillis;
    /**
     * The coordinator's own, not folded: it wrote this generation's marker and logged it
     * established; the state follows when the event comes back round.
     */
    boolean markerWritten;
    /**
     * The coordinator's own, not folded: it logged this generation failed for a capture overdue
     * ({@link Overdue}); the state follows when the event comes back round.
     */
    boolean failing;
    /**
     * The coordinator's own, not folded: set once it sent again the capture commands of a
     * generation an earlier coordinator requested (found open in the replay); sent once.
     */
    boolean capturesResent;
    /** When its last rank was captured (log time, ms since the epoch); 0 until then or if unknown. */
    long capturedAtMillis;
    /** What its ranks' agents expect staging to write, from a sample at capture, and how many ranks said so. */
    long expectedWritten;
    int expectedRanks;
    /** When its last rank's image was staged (log time, ms since the epoch); 0 until then or if unknown. */
    long lastStagedAtMillis;
    Event.PredictionMade prediction;
    /** What its nodes reported of their staging so far, while it stages; null before and once compacted. */
    StagingSoFar stagingSoFar;
    /** When its nodes passed each mark of its bytes read, and the forecasts made again there; kept once compacted. */
    final StagingMarks marks = new StagingMarks();
    /** Which node ran which rank when it was requested: where its images were captured. */
    Placement placement;
    /** Ranks copied into a partner's cache ({@code ferry run --partner}) and their bytes. */
    int partnerRanks;
    long partnerBytes;

    // Package-private below: FoldSnapshot carries them.
    // Per-rank detail, while in flight (null once compacted). A bit set that covers every rank
    // 0..n-1 is dropped too when compacted: null then means "all of the first count ranks".
    BitSet captured = new BitSet();
    BitSet staged = new BitSet();
    /** Each captured rank's node (index into {@link #names}), bytes and stall; staging seconds of each staged rank. */
    int[] nodeOf = new int[0];
    long[] bytes = new long[0];
    double[] stall = new double[0];
    double[] staging = new double[0];

    // What is kept once compacted: per node (indexed as names), and the stalls' spread.
    long[] bytesByNode;
    double[] stagingByNode;
    BitSet nodesCaptured;
    double stragglerSpread = 1;

    /** The job's rank count when this generation was taken (0: unknown): a run of another count cannot restore it. */
    final int ranks;

    GenerationView(long generation, NodeNames names, int ranks) {
        this(generation, names, ranks, true);
    }

    /** @param sized whether to size the per-rank arrays for {@code ranks} (not when {@link FoldSnapshot} sets them) */
    GenerationView(long generation, NodeNames names, int ranks, boolean sized) {
        this.generation = generation;
        this.ranks = ranks;
        this.names = names;
        if (sized) {
            grow(Math.max(0, ranks));
        }
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

    private boolean compacted() {
        return bytesByNode != null;
    }

    /**
     * Folds a rank's capture; a repeated one (a producer's retry, a replay) replaces the rank's
     * detail. Returns what it adds to the generation's raw bytes: 0 for a repeat of the same size.
     */
    long captured(Event.ImageCaptured c) {
        int r = c.rank();
        int node = names.index(c.node());
        if (compacted()) { // late: only totals, and a rank already counted is not counted again
            if (captured == null || captured.get(r)) {
                return 0;
            }
            captured.set(r);
            capturedCount++;
            bytesByNode = addAt(bytesByNode, node, c.bytes());
            nodesCaptured.set(node);
            return c.bytes();
        }
        grow(r + 1);
        long before = 0;
        if (!captured.get(r)) {
            captured.set(r);
            capturedCount++;
            if (c.expectedWrittenBytes() >= 0) { // the agent's sample, first report of the rank only
                expectedWritten += c.expectedWrittenBytes();
                expectedRanks++;
            }
        } else {
            before = bytes[r];
        }
        nodeOf[r] = node;
        bytes[r] = c.bytes();
        stall[r] = c.seconds();
        return c.bytes() - before;
    }

    /**
     * Folds a rank's staging; whether it is the rank's first (a repeat, or a restaging after an
     * agent's crash, wrote nothing the first did not: its bytes are not counted again).
     */
    boolean staged(Event.ImageStaged s) {
        int r = s.rank();
        if (compacted()) {
            if (staged != null && !staged.get(r)) {
                staged.set(r);
                stagedCount++;
                return true;
            }
            return false;
        }
        grow(r + 1);
        boolean first = !staged.get(r);
        if (first) {
            staged.set(r);
            stagedCount++;
        }
        staging[r] = s.seconds();
        return first;
    }

    /** Drops the per-rank detail, keeping the per-node totals and the stalls' spread. Idempotent. */
    void compact() {
        stagingSoFar = null;
        if (compacted()) {
            return;
        }
        long[] b = new long[names.size()];
        double[] st = new double[names.size()];
        double[] stalls = stalls();
        BitSet seen = new BitSet(names.size());
        for (int r = captured.nextSetBit(0); r >= 0; r = captured.nextSetBit(r + 1)) {
            seen.set(nodeOf[r]);
            b[nodeOf[r]] += bytes[r];
            if (staged.get(r)) {
                st[nodeOf[r]] += staging[r];
            }
        }
        stragglerSpread = Stats.stragglerSpread(stalls);
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
     * The ranks this in-flight generation still waits for: not captured yet while it is OPEN,
     * not staged yet once CAPTURED; none once established or failed.
     */
    public BitSet waitingFor(int ranks) {
        BitSet done = state == State.OPEN ? captured : state == State.CAPTURED ? staged : null;
        BitSet missing = new BitSet();
        if (done != null || state == State.OPEN || state == State.CAPTURED) {
            missing.set(0, ranks);
            if (done != null) {
                missing.andNot(done);
            } else { // compacted with every rank done
                missing.clear();
            }
        }
        return missing;
    }

    public long generation() {
        return generation;
    }

    public State state() {
        return state;
    }

    /** Ranks whose images also sit in a partner node's cache. */
    public int partnerRanks() {
        return partnerRanks;
    }

    public long partnerBytes() {
        return partnerBytes;
    }

    public int capturedRanks() {
        return capturedCount;
    }

    public int stagedRanks() {
        return stagedCount;
    }

    public long rawBytes() {
        return rawBytes;
    }

    /** Raw bytes this generation put into {@code node}'s cache (0 if none). */
    public long bytesOn(String node) {
        int i = names.find(node);
        if (i < 0) {
            return 0;
        }
        if (compacted()) {
            return i < bytesByNode.length ? bytesByNode[i] : 0;
        }
        long sum = 0;
        for (int r = captured.nextSetBit(0); r >= 0; r = captured.nextSetBit(r + 1)) {
            if (nodeOf[r] == i) {
                sum += bytes[r];
            }
        }
        return sum;
    }

    /** Nodes that captured ranks of this generation. */
    public Set<String> nodes() {
        Set<String> out = new LinkedHashSet<>();
        if (compacted()) {
            for (int i = nodesCaptured.nextSetBit(0); i >= 0; i = nodesCaptured.nextSetBit(i + 1)) {
                out.add(names.name(i));
            }
            return Collections.unmodifiableSet(out);
        }
        for (int r = captured.nextSetBit(0); r >= 0; r = captured.nextSetBit(r + 1)) {
            out.add(names.name(nodeOf[r]));
        }
        return Collections.unmodifiableSet(out);
    }

    /**
     * Seconds {@code node}'s agent spent staging this generation: its ranks' shares, which add up to its pushes' time.
     */
    public double stagingSecondsOn(String node) {
        int i = names.find(node);
        if (i < 0) {
            return 0;
        }
        if (compacted()) {
            return i < stagingByNode.length ? stagingByNode[i] : 0;
        }
        double sum = 0;
        for (int r = captured.nextSetBit(0); r >= 0; r = captured.nextSetBit(r + 1)) {
            if (nodeOf[r] == i && staged.get(r)) {
                sum += staging[r];
            }
        }
        return sum;
    }

    /**
     * Each captured rank's stall, in rank order, while the generation is in flight; empty once
     * it is established or failed (the per-rank detail is dropped then: {@link #stragglerSpread()}).
     */
    public double[] stalls() {
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
    public double stragglerSpread() {
        return compacted() ? stragglerSpread : Stats.stragglerSpread(stalls());
    }

    public long storedBytes() {
        return storedBytes;
    }

    public double maxStallSeconds() {
        return maxStallSeconds;
    }

    /** The coordinator's forecast for this generation made at its capture, if it made one. */
    public Optional<Event.PredictionMade> prediction() {
        return Optional.ofNullable(prediction);
    }

    /**
     * The forecast made again once its nodes had read {@code share} of its bytes
     * ({@link io.ferry.coordinator.predict.StagingSoFar#MARKS}).
     */
    public Optional<Event.PredictionMade> predictionAt(double share) {
        return marks.forecastAt(share);
    }

    /** The newest forecast: the last one made as it staged, else the one at capture. */
    public Optional<Event.PredictionMade> currentPrediction() {
        return marks.newestForecast().or(this::prediction);
    }

    /** Folds a forecast: the one at capture, or one made again as it staged. */
    void predicted(Event.PredictionMade p) {
        if (p.readShare() == 0) {
            prediction = p;
        } else {
            marks.forecast(p);
        }
    }

    /**
     * Folds a node's staging report, logged at {@code atMillis}, while it stages. A mark is passed only once
     * every rank is captured: before, its raw bytes are those captured so far, and a node staging while
     * another still captured passed a quarter early (the rest after it looked 4 times as long).
     */
    void stagingReported(Event.StagingProgress p, long atMillis) {
        if (stagingSoFar == null) {
            stagingSoFar = new StagingSoFar();
        }
        stagingSoFar.report(p, atMillis);
        if (state == State.CAPTURED) {
            marks.read(stagingSoFar.readShare(rawBytes), atMillis);
        }
    }

    /** Seconds from its request until its nodes had read {@code mark} of its bytes; NaN where not known. */
    public double secondsToMark(double mark) {
        return marks.secondsFrom(requestedAtMillis, mark);
    }

    /** When it was requested (log time, ms since the epoch); 0 if unknown. */
    public long requestedAtMillis() {
        return requestedAtMillis;
    }

    public double secondsToEstablished() {
        return secondsToEstablished;
    }

    /**
     * Seconds from the request until every rank was captured (log times), or NaN where either is
     * unknown: the part of its time to established that is known once a forecast is made.
     */
    public double secondsToCaptured() {
        return requestedAtMillis > 0 && capturedAtMillis >= requestedAtMillis
                ? (capturedAtMillis - requestedAtMillis) / 1000.0 : Double.NaN;
    }

    /** Whether a rollback or a new run of the job left it in flight ({@link JobView#abandonAfter}). */
    boolean abandoned() {
        return state == State.FAILED && failure.startsWith("abandoned");
    }

    /** When its last rank was captured (log time, ms since the epoch); 0 if not yet or unknown. */
    /**
     * Seconds from its last rank staged to established (the commit: markers and their sync), or
     * NaN where the log does not say.
     */
    public double secondsToCommit() {
        if (state != State.ESTABLISHED || lastStagedAtMillis <= 0 || requestedAtMillis <= 0
                || Double.isNaN(secondsToEstablished)) {
            return Double.NaN;
        }
        double s = (requestedAtMillis + secondsToEstablished * 1000 - lastStagedAtMillis) / 1000.0;
        return s >= 0 ? s : Double.NaN;
    }

    /**
     * The bytes its agents expect staging to write, estimated from a sample of each image at
     * capture, or -1 unless every captured rank's agent said.
     */
    public long expectedWrittenBytes() {
        return expectedRanks > 0 && expectedRanks == capturedCount ? expectedWritten : -1;
    }

    public long capturedAtMillis() {
        return capturedAtMillis;
    }

    /** Why it failed, or why staging is waiting (a store that is down), or empty. */
    public String problem() {
        return !failure.isEmpty() ? failure : !restoreFailure.isEmpty() ? "unusable: " + restoreFailure
                : stagingProblem;
    }
}
