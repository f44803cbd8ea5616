package io.ferry.coordinator;

import io.ferry.coordinator.predict.StagingMarks;
import io.ferry.coordinator.predict.StagingSoFar;
import io.ferry.model.Event;
import io.ferry.model.Placement;

import java.util.BitSet;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.Optional;
import java.util.Set;

/**
 * What the log says about one generation of one job. Mutable, owned by {@link Jobs}; not thread-safe.
 *
 * <p>Its ranks' detail ({@link RankDetail}) is sized for a million ranks and dropped once it is
 * established or failed ({@link #compact()}), keeping what the status, dashboard and predictor read.
 */
public final class GenerationView {
    /** Snapshot states (DESIGN.md): OPEN -> CAPTURED -> ESTABLISHED, or FAILED. */
    public enum State { OPEN, CAPTURED, ESTABLISHED, FAILED }

    final long generation;
    State state = State.OPEN;
    final NodeNames names;
    /** Which ranks captured and staged, and their detail while in flight (FoldSnapshot carries it). */
    final RankDetail rankDetail;
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
    /**
     * When its last rank's capture was logged (the record's time, ms since the epoch; 0 if unknown): live, the
     * coordinator counts a capture from when it reads it, 10 to 20 ms later and by as much more or less each time,
     * where a mark counts from when its report was logged; a time from the capture to a mark is taken between
     * the two logged times, as a replay of the log takes it.
     */
    long capturedLoggedAtMillis;
    /**
     * Bytes its other nodes still had to read for staging when its last rank was captured (on another node): what
     * staged beside that node's own push, on the store (and, nodes sharing a machine, on its cores); 0 where
     * none did or it is not known ({@link #othersLeftAtCapture}).
     */
    long othersLeftAtCapture;
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
        this.rankDetail = new RankDetail(sized ? ranks : 0);
    }

    /**
     * Folds a rank's capture; a repeated one (a producer's retry, a replay) replaces the rank's
     * detail. Returns what it adds to the generation's raw bytes: 0 for a repeat of the same size.
     */
    long captured(Event.ImageCaptured c) {
        if (!rankDetail.compacted() && !rankDetail.hasCaptured(c.rank()) && c.expectedWrittenBytes() >= 0) {
            expectedWritten += c.expectedWrittenBytes(); // the agent's sample, first report of the rank only
            expectedRanks++;
        }
        return rankDetail.captured(c.rank(), names.index(c.node()), c.bytes(), c.seconds());
    }

    /**
     * Folds a rank's staging; whether it is the rank's first (a repeat, or a restaging after an
     * agent's crash, wrote nothing the first did not: its bytes are not counted again).
     */
    boolean staged(Event.ImageStaged s) {
        return rankDetail.staged(s.rank(), s.seconds());
    }

    /** Drops the per-rank detail and the staging reports, keeping the per-node totals and the stalls' spread. Idempotent. */
    void compact() {
        stagingSoFar = null;
        rankDetail.compact(names.size());
    }

    /**
     * The ranks this in-flight generation still waits for: not captured yet while it is OPEN,
     * not staged yet once CAPTURED; none once established or failed.
     */
    public BitSet waitingFor(int ranks) {
        return state == State.OPEN ? RankDetail.missing(rankDetail.captured, ranks)
                : state == State.CAPTURED ? RankDetail.missing(rankDetail.staged, ranks) : new BitSet();
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
        return rankDetail.capturedCount;
    }

    public int stagedRanks() {
        return rankDetail.stagedCount;
    }

    public long rawBytes() {
        return rawBytes;
    }

    /** Raw bytes this generation put into {@code node}'s cache (0 if none). */
    public long bytesOn(String node) {
        return rankDetail.bytesOn(names.find(node));
    }

    /** Nodes that captured ranks of this generation. */
    public Set<String> nodes() {
        Set<String> out = new LinkedHashSet<>();
        BitSet nodes = rankDetail.nodes();
        for (int i = nodes.nextSetBit(0); i >= 0; i = nodes.nextSetBit(i + 1)) {
            out.add(names.name(i));
        }
        return Collections.unmodifiableSet(out);
    }

    /**
     * Seconds {@code node}'s agent spent staging this generation: its ranks' shares, which add up to its pushes' time.
     */
    public double stagingSecondsOn(String node) {
        return rankDetail.stagingSecondsOn(names.find(node));
    }

    /**
     * Each captured rank's stall, in rank order, while the generation is in flight; empty once
     * it is established or failed (the per-rank detail is dropped then: {@link #stragglerSpread()}).
     */
    public double[] stalls() {
        return rankDetail.stalls();
    }

    /** The slowest rank's stall over the median rank's (1 when fewer than two ranks or no stall). */
    public double stragglerSpread() {
        return rankDetail.stragglerSpread();
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

    /**
     * Seconds from when its capture was logged until its nodes had read {@code mark} of its bytes (both log
     * times); NaN where not known.
     */
    public double secondsFromCaptureToMark(double mark) {
        return marks.secondsFrom(capturedLoggedAtMillis, mark);
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
        return expectedRanks > 0 && expectedRanks == capturedRanks() ? expectedWritten : -1;
    }

    /**
     * Bytes the nodes other than {@code lastNode}, whose capture completed it, still had to read for staging
     * then: each node's captured bytes less what its newest staging report says it read, none for a node
     * whose ranks are all staged. Measured on the multi-node accuracy jobs, how long the last node's push
     * takes goes with it (a copy-only snapshot's rest after capture took 0.3 s where the others were done,
     * 1.0 s where they still had 96 MiB to read); on one node it is always 0. A node not heard from has all its
     * bytes left, where {@code reportsFolded} (the job's staging reports are folded here); where they are not
     * and none of this generation was, it is not known (0): a coordinator that replays the events topic reads
     * no reports (they are on the heartbeats topic), and would otherwise count every other node's bytes as left.
     */
    long leftOnOtherNodes(String lastNode, boolean reportsFolded) {
        if (stagingSoFar == null && !reportsFolded) {
            return 0;
        }
        int last = names.find(lastNode);
        long[] unstaged = rankDetail.unstagedNodesBytes(names.size());
        long left = 0;
        for (int n = 0; n < unstaged.length; n++) {
            if (n != last && unstaged[n] > 0) {
                long read = stagingSoFar == null ? 0 : stagingSoFar.readBy(names.name(n));
                left += Math.max(0, unstaged[n] - read);
            }
        }
        return left;
    }

    /** {@link #leftOnOtherNodes} when its last rank was captured: 0 for one node, or where it is not known. */
    public long othersLeftAtCapture() {
        return othersLeftAtCapture;
    }

    /** When its last rank was captured (log time, ms since the epoch); 0 if not yet or unknown. */
    public long capturedAtMillis() {
        return capturedAtMillis;
    }

    /** Why it failed, or why staging is waiting (a store that is down), or empty. */
    public String problem() {
        return !failure.isEmpty() ? failure : !restoreFailure.isEmpty() ? "unusable: " + restoreFailure
                : stagingProblem;
    }
}
