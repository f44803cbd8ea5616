package io.ferry.coordinator.predict;

import io.ferry.coordinator.GenerationView;
import io.ferry.coordinator.JobView;
import io.ferry.model.Event;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Forecasts for a job's next snapshot, fitted on its own established snapshots.
 *
 * <p>Time to established (from the request) is modelled as {@code a + b x written + c x ranks}:
 * a fixed cost (request, quiesce, commit tick), a cost per byte the snapshot writes to the
 * store (its new chunks, compressed: what the store's bandwidth and the durable writes are spent
 * on) and a cost per rank (one manifest, one capture handshake and one staging round each).
 * Written bytes are what the agents report staged ({@code ImageStaged.storedBytes}); for the
 * generation being forecast, whose staging has not started, they are its raw bytes times the
 * share the job's newest established snapshot wrote of its own raw bytes (the job's dedup and
 * compression, measured on itself). A job whose later generations write a fifth of the first
 * one's bytes for the same raw size is forecast from that fifth, not from the raw size (with raw
 * bytes, such a job's forecasts missed by a median 29%). A history without any written bytes
 * (logs older than staging reports, or snapshots that wrote nothing new) falls back to raw bytes.
 * On several nodes the time after capture has a third term: the bytes the other nodes still had to read
 * for staging when the last rank was captured, the load the last node's push shares the store with
 * ({@link GenerationView#othersLeftAtCapture}; only where more of it makes the rest longer).
 * The stall is {@code a + b x (rawBytes / ranks)}:
 * ranks write their images in parallel, so the largest share sets it. Both are least squares
 * over the last {@link #WINDOW} established snapshots, made only after {@link #WARM_UP} of them
 * (the first ones warm caches and JIT compilers and mislead), weighted by recency: a snapshot
 * counts half as much as one {@link #HALF_LIFE} snapshots newer, and for relative error (each
 * point over its time squared, so short snapshots are not drowned by long ones); the time after capture, and
 * after a mark, weighted as well towards the snapshots that wrote about as much as the one forecast
 * ({@link #near}: that time curves with the bytes on some nodes). A running job drifts
 * (page cache, JIT, a store filling up, a dedup cache warming): with every snapshot writing the same
 * bytes, an unweighted fit is the window's mean and lags a trend, which missed a job whose
 * times fell from 17 to 10 s by a median 25%. Where the history cannot separate a term (every
 * snapshot the same size or rank count), that term is dropped rather than guessed.
 *
 * <p>Beside it, the Checkpoint Fill-Time Law's ideal time for the same bytes: this node's disk
 * is the whole storage, so the law reduces to bytes over the disk's write bandwidth, taken
 * as the best rate the job's captures reached.
 */
public final class Predictor {
    private static final Logger LOG = LoggerFactory.getLogger(Predictor.class);
    public static final int WARM_UP = 3;
    public static final int WINDOW = 10;
    /** Snapshots after which a snapshot's weight in the fit has halved. */
    public static final double HALF_LIFE = 3;

    private Predictor() {}

    /** A forecast for a generation of {@code rawBytes} over {@code ranks}, or empty during warm-up. */
    public static Optional<Event.PredictionMade> predict(JobView job, long generation, long rawBytes, int ranks) {
        return predict(job, generation, rawBytes, ranks, Double.NaN, Long.MAX_VALUE);
    }

    /**
     * As {@link #predict(JobView, long, long, int)} for a generation whose ranks were all captured
     * {@code capturedSeconds} after its request (NaN: not yet, so that part is forecast too), from
     * only the snapshots established by {@code asOfMillis} (log time): what the model forecasts
     * then. With {@code asOfMillis} in the past, it replays a recorded job ({@code ferry plan
     * --accuracy J --refit}).
     */
    public static Optional<Event.PredictionMade> predict(JobView job, long generation, long rawBytes, int ranks,
                                                         double capturedSeconds, long asOfMillis) {
        return predict(job, generation, rawBytes, ranks, capturedSeconds, asOfMillis, -1, 0);
    }

    /**
     * The forecast at capture of {@code g}, every rank captured: for the bytes its agents expect
     * staging to write, from their sample of each image ({@link GenerationView#expectedWrittenBytes}),
     * else for the share of its raw bytes the newest snapshot wrote.
     */
    public static Optional<Event.PredictionMade> atCapture(JobView job, GenerationView g, long asOfMillis) {
        return predict(job, g.generation(), g.rawBytes(), g.capturedRanks(), g.secondsToCaptured(), asOfMillis,
                g.expectedWrittenBytes(), g.othersLeftAtCapture());
    }

    /**
     * The forecast again while {@code g} stages, once its nodes have read {@code mark} of its raw
     * bytes: the time already spent and the rest as the job's snapshots took it from the same mark
     * ({@link #restAfterMark}), for the bytes the nodes' pushes say it will write ({@link StagingSoFar})
     * instead of the share the previous snapshot wrote (where no snapshot says when it passed the
     * mark: the fit of the whole time, for those bytes); once every node has a rate, blended
     * with the time its own staging rate gives (the slowest node's bytes left at its rate, and the
     * job's median commit), weighted by {@code mark}; never earlier than {@code nowMillis}.
     * Empty where there was no forecast at capture.
     */
    public static Optional<Event.PredictionMade> during(JobView job, GenerationView g, StagingSoFar soFar, double mark,
                                                        long nowMillis) {
        Optional<Event.PredictionMade> atCapture = g.prediction();
        if (atCapture.isEmpty()) {
            return Optional.empty();
        }
        Event.PredictionMade p = atCapture.get();
        double fallback = p.writtenBytes() >= 0 && p.rawBytes() > 0 ? (double) p.writtenBytes() / p.rawBytes() : 1;
        long written = soFar.writtenEstimate(g.rawBytes(), fallback);
        return predict(job, g.generation(), g.rawBytes(), g.capturedRanks(), g.secondsToCaptured(), nowMillis, written,
                g.othersLeftAtCapture())
                .map(again -> {
                    double elapsed = g.requestedAtMillis() > 0 ? (nowMillis - g.requestedAtMillis()) / 1000.0 : 0;
                    double rest = g.requestedAtMillis() > 0
                            ? restAfterMark(job, g, mark, written, nowMillis) : Double.NaN;
                    // From the mark on, as the job's snapshots went from the same mark: the time already spent
                    // (capture, the push's set-up, its slow first tenth) is measured, not fitted. Counted to the
                    // log time of the report that passed the mark, as the history's marks are: the coordinator
                    // reads it a little later (0.1 to 0.2 s here, a tenth of a short snapshot).
                    double atMark = g.secondsToMark(mark);
                    double seconds = Double.isNaN(rest) ? again.predictedSecondsToEstablished()
                            : (Double.isNaN(atMark) ? elapsed : atMark) + rest;
                    double left = soFar.secondsLeft(g.nodes().size(), nowMillis);
                    double commit = commitSeconds(job, g.generation());
                    // Before half is read, a node's rate rests on its second tenth, which runs long (one-node jobs,
                    // where it is there by a quarter: 9 forecasts of 10 long, +2% to +17%): where the job's
                    // snapshots say how the rest went from this mark, that is taken alone.
                    boolean rateCounts = mark >= 0.5 || Double.isNaN(rest);
                    if (g.requestedAtMillis() > 0 && !Double.isNaN(left) && !Double.isNaN(commit) && rateCounts) {
                        // What this snapshot's own staging rate says, counted as much as the share of its bytes read:
                        // early on, a few tenths' rate is noisy; later it knows more than the job's history does.
                        seconds = mark * (elapsed + left + commit) + (1 - mark) * seconds;
                    }
                    LOG.debug("job {} generation {} at {} read: {} s since the request, {} s left at the slowest node's"
                            + " rate and a commit of {} s; the history says {} s in all, {} s from this mark",
                            job.job(), g.generation(), mark, elapsed, left, commit,
                            again.predictedSecondsToEstablished(), rest);
                    return p.during(mark, Math.max(elapsed, seconds), written);
                });
    }

    /**
     * Seconds from the moment {@code g}'s nodes had read {@code mark} of its bytes to established, as
     * the job's snapshots took from the same mark: the rest after capture's model ({@code a + b x
     * written + c x ranks}, and on several nodes the others' load: {@link OthersLoad#fitted}; recency- and
     * relative-weighted) fitted on those times instead, for the
     * {@code written} bytes the pushes say this one writes; on one node, scaled by the pace this one
     * went at from its capture to the mark ({@link #pace}). NaN until {@link #WARM_UP} snapshots
     * established by {@code asOfMillis} say when they passed the mark (logs from before agents reported
     * their staging say nothing). What lies before the mark (the capture, a push's set-up and its
     * first, slowest tenth) swings from one snapshot to the next and is measured by then; the fit
     * of the whole time after capture carried that swing into every forecast made during staging.
     */
    static double restAfterMark(JobView job, GenerationView g, double mark, long written, long asOfMillis) {
        List<GenerationView> history = history(job, g.generation(), asOfMillis);
        history.removeIf(h -> Double.isNaN(h.secondsToMark(mark)) || h.secondsToMark(mark) > h.secondsToEstablished());
        if (history.size() < WARM_UP) {
            return Double.NaN;
        }
        List<GenerationView> fit = window(history);
        boolean byWritten = fit.stream().anyMatch(h -> h.storedBytes() > 0);
        double[][] xs = new double[fit.size()][];
        double[] ts = new double[fit.size()];
        double[] rest = new double[fit.size()];
        double[] weight = new double[fit.size()];
        for (int i = 0; i < fit.size(); i++) {
            GenerationView h = fit.get(i);
            xs[i] = new double[]{byWritten ? h.storedBytes() : h.rawBytes(), h.capturedRanks(),
                    h.othersLeftAtCapture()};
            ts[i] = h.secondsToEstablished();
            rest[i] = ts[i] - h.secondsToMark(mark);
            weight[i] = Math.pow(0.5, (fit.size() - 1 - i) / HALF_LIFE);
        }
        GenerationView newest = history.get(history.size() - 1);
        double expected = byWritten && written >= 0 ? written
                : byWritten ? g.rawBytes() * (double) newest.storedBytes() / newest.rawBytes() : g.rawBytes();
        double[] w = relative(weight, ts);
        double[] x = {expected, g.capturedRanks(), g.othersLeftAtCapture()};
        w = near(xs, w, x[0]);
        double seconds = OthersLoad.fitted(xs, rest, w, x) * pace(g, mark, fit, xs, w, x); // pace: one node, no load
        return Math.max(0, seconds);
    }

    /** How far, at most, the pace so far may scale the rest from a mark (either way). */
    static final double PACE_LIMIT = 2;

    /**
     * For a job on one node: how fast {@code g} went from its capture to {@code mark} (between the times both
     * were logged, {@link GenerationView#secondsFromCaptureToMark}), as a factor on the rest after it: the square root of the time it took over the time the job's snapshots {@code fit}
     * took for the same bytes (fitted as the rest is, on {@code xs} with weights {@code w}, at {@code x}),
     * within {@link #PACE_LIMIT}. A node busier than usual (other work, a slower disk, page cache
     * written back) reads the rest of its images slower too: on the one-node accuracy jobs, the time
     * from capture to a quarter read and the rest after it went together (correlation +0.4 to +0.8 in
     * 8 recorded runs of 9), and their forecasts at 25%, replayed ({@code ferry plan --accuracy J --refit}),
     * missed by medians of 2.1% to 6.0% without it, 1.9% to 4.1% with it. The square root takes the
     * history and this snapshot's own pace as equally good guesses.
     * 1 (no change) for jobs on several nodes: there a mark passed soon after the capture says that
     * the nodes captured first had read most of theirs by then, not how fast the last one goes (on the
     * multi-node jobs the factor made 4 runs of 14 miss instead of 1), and where any time is unknown. A
     * capture is logged on its agent's clock and a mark on the broker's: a skew between them shifts this
     * snapshot's time and the job's usual one alike, which draws the factor towards 1.
     */
    private static double pace(GenerationView g, double mark, List<GenerationView> fit, double[][] xs, double[] w,
                               double[] x) {
        double soFar = g.secondsFromCaptureToMark(mark);
        if (g.nodes().size() != 1 || !(soFar > 0)) {
            return 1;
        }
        double[] lag = new double[fit.size()];
        for (int i = 0; i < lag.length; i++) {
            lag[i] = fit.get(i).secondsFromCaptureToMark(mark);
            if (!(lag[i] >= 0)) {
                return 1;
            }
        }
        double usual = LeastSquares.fit(xs, lag, w).applyAsDouble(x);
        if (!(usual > 0.02)) {
            return 1; // a mark passed as good as at the capture: no pace to tell
        }
        return Math.sqrt(Math.min(PACE_LIMIT, Math.max(1 / PACE_LIMIT, soFar / usual)));
    }

    /** The job's snapshots before {@code generation} established by {@code asOfMillis} (log time), oldest first. */
    private static List<GenerationView> history(JobView job, long generation, long asOfMillis) {
        List<GenerationView> history = new ArrayList<>();
        for (GenerationView g : job.generations()) {
            if (g.generation() < generation && g.state() == GenerationView.State.ESTABLISHED && g.rawBytes() > 0
                    && g.capturedRanks() > 0 && !Double.isNaN(g.secondsToEstablished())
                    && g.requestedAtMillis() + g.secondsToEstablished() * 1000 <= asOfMillis) {
                history.add(g);
            }
        }
        return history;
    }

    /**
     * The snapshots a fit takes of {@code history} (at least {@link #WARM_UP}): the latest
     * {@link #WINDOW}, the warm-up ones left out once enough others remain.
     */
    private static List<GenerationView> window(List<GenerationView> history) {
        int from = history.size() >= 2 * WARM_UP ? WARM_UP : history.size() - WARM_UP;
        return history.subList(Math.max(from, history.size() - WINDOW), history.size());
    }

    /**
     * The commit's seconds (last rank staged to established) the job's recent snapshots took: their
     * median over the last {@link #WINDOW}; NaN where the log says none.
     */
    private static double commitSeconds(JobView job, long before) {
        List<Double> commits = new ArrayList<>();
        for (GenerationView g : job.generations()) {
            if (g.generation() < before && !Double.isNaN(g.secondsToCommit())) {
                commits.add(g.secondsToCommit());
            }
        }
        if (commits.isEmpty()) {
            return Double.NaN;
        }
        List<Double> recent = commits.subList(Math.max(0, commits.size() - WINDOW), commits.size());
        return Stats.median(recent.stream().mapToDouble(Double::doubleValue).toArray());
    }

    /**
     * The forecast for {@code written} bytes written to the store ({@code < 0}: the newest snapshot's share of raw).
     */
    private static Optional<Event.PredictionMade> predict(JobView job, long generation, long rawBytes, int ranks,
                                                          double capturedSeconds, long asOfMillis, long written,
                                                          long othersLeft) {
        List<GenerationView> history = history(job, generation, asOfMillis);
        if (history.size() < WARM_UP) {
            return Optional.empty();
        }
        List<GenerationView> fit = window(history);
        double[][] xs = new double[fit.size()][];
        double[] ts = new double[fit.size()];
        double[] rest = new double[fit.size()];
        double[] caught = new double[fit.size()];
        double[][] sx = new double[fit.size()][];
        double[] ss = new double[fit.size()];
        double[] weight = new double[fit.size()];
        double bestRate = 0;
        boolean byWritten = fit.stream().anyMatch(g -> g.storedBytes() > 0);
        // Split at the capture where every snapshot of the window says when it was captured.
        boolean split = fit.stream().allMatch(g -> g.secondsToCaptured() <= g.secondsToEstablished());
        GenerationView newest = history.get(history.size() - 1);
        double writtenShare = byWritten ? (double) newest.storedBytes() / newest.rawBytes() : 1;
        for (int i = 0; i < fit.size(); i++) {
            GenerationView g = fit.get(i);
            xs[i] = new double[]{byWritten ? g.storedBytes() : g.rawBytes(), g.capturedRanks(),
                    g.othersLeftAtCapture()};
            ts[i] = g.secondsToEstablished();
            caught[i] = split ? g.secondsToCaptured() : 0;
            rest[i] = ts[i] - caught[i];
            sx[i] = new double[]{(double) g.rawBytes() / g.capturedRanks()};
            ss[i] = g.maxStallSeconds();
            weight[i] = Math.pow(0.5, (fit.size() - 1 - i) / HALF_LIFE);
            if (g.maxStallSeconds() > 0) {
                bestRate = Math.max(bestRate, g.rawBytes() / g.maxStallSeconds());
            }
        }
        // Each part is judged against the whole time, as the forecast is: relative to ts.
        double[] w = relative(weight, ts);
        double expected = written >= 0 && byWritten ? written : rawBytes * writtenShare;
        double afterCapture = OthersLoad.fitted(xs, rest, near(xs, w, expected),
                new double[]{expected, ranks, othersLeft});
        double toCapture = !split ? 0 : capturedSeconds >= 0 ? capturedSeconds
                : Math.max(0, LeastSquares.fit(sx, caught, w).applyAsDouble(new double[]{(double) rawBytes / ranks}));
        double toEstablished = toCapture + Math.max(0, afterCapture);
        double stall = LeastSquares.fit(sx, ss, relative(weight, ss))
                .applyAsDouble(new double[]{(double) rawBytes / ranks});
        double ideal = bestRate > 0 ? rawBytes / bestRate : Double.NaN;
        return Optional.of(new Event.PredictionMade(job.job(), generation, rawBytes, ranks, Math.max(0, stall),
                toEstablished, ideal, fit.size(), byWritten ? Math.round(expected) : -1));
    }

    /**
     * The width of {@link #near}'s weighting: a snapshot whose written bytes are this share of the window's
     * span away from the forecast's counts {@code e^-1/2} (0.61) as much, twice as far 0.14.
     */
    static final double NEAR_WIDTH = 0.5;

    /**
     * The weights {@code w} of a fit's snapshots (rows {@code xs}, written bytes first), each times how near its
     * written bytes are to the forecast's {@code x0} (a Gaussian, {@link #NEAR_WIDTH} of the span of the window's
     * bytes and {@code x0} wide): a straight line fitted nearest where it is used. The time after capture is not a
     * straight line in the bytes on every job: on the one-node accuracy job of 4 ranks, whose sizes come in one
     * fixed cycle, it took 0.43 to 0.83 s at 64 to 168 MiB and 1.2 to 1.75 s at 200 to 248 MiB. (With the sizes in
     * other orders, the push's time was a line in the bytes with a scatter of about 0.3 s, and which size sat
     * above it followed the order, so the bend may be the cycle's rather than the size's;
     * benchmarks/run-push-sizes.sh.) A line through all of them
     * forecast the large and the small ones short and the middle ones long: medians at capture of 9.4% to 10.1% in
     * 4 of 6 recorded runs of that job, 6.3% to 8.5% with the weighting (replayed with {@code ferry plan --accuracy
     * J --refit}; docs/benchmarks.md). Narrower weights followed the curve closer but carried single slow or fast
     * snapshots into the forecasts of their size. Where the snapshots are the same size, or their times lie on a
     * line in the bytes, the weighting changes nothing: any weights fit a line exactly.
     */
    static double[] near(double[][] xs, double[] w, double x0) {
        double min = x0;
        double max = x0;
        for (double[] p : xs) {
            min = Math.min(min, p[0]);
            max = Math.max(max, p[0]);
        }
        double span = max - min;
        if (!(span > 0)) {
            return w;
        }
        double[] near = new double[w.length];
        double before = 0;
        double after = 0;
        for (int i = 0; i < w.length; i++) {
            double z = (xs[i][0] - x0) / (NEAR_WIDTH * span);
            near[i] = w[i] * Math.max(1e-6, Math.exp(-0.5 * z * z)); // never 0: the fit wants positive weights
            before += w[i];
            after += near[i];
        }
        for (int i = 0; i < near.length; i++) {
            near[i] *= before / after; // the same total as before: the fit's ridge is sized to it
        }
        return near;
    }

    /**
     * Weights that make the fit minimise relative errors, as forecasts are judged (a second off
     * a 1 s snapshot is worse than a second off a 20 s one): each point's weight over its target
     * squared.
     */
    private static double[] relative(double[] weight, double[] target) {
        double[] out = new double[weight.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = weight[i] / Math.max(1e-6, target[i] * target[i]);
        }
        return out;
    }

    /**
     * Young's first-order optimum checkpoint interval, {@code sqrt(2 C M)} for a checkpoint cost
     * {@code C} (the stall the application sees) and a mean time between failures {@code M}.
     */
    public static double youngSeconds(double checkpointSeconds, double mtbfSeconds) {
        return Math.sqrt(2 * checkpointSeconds * mtbfSeconds);
    }

    /**
     * Daly's higher-order optimum (2006): {@code sqrt(2CM) [1 + sqrt(C/2M)/3 + (C/2M)/9] - C}
     * for {@code C < 2M}, else {@code M}.
     */
    public static double dalySeconds(double checkpointSeconds, double mtbfSeconds) {
        double c = checkpointSeconds;
        double m = mtbfSeconds;
        if (c >= 2 * m) {
            return m;
        }
        double x = c / (2 * m);
        return Math.sqrt(2 * c * m) * (1 + Math.sqrt(x) / 3 + x / 9) - c;
    }
}
