package io.ferry.coordinator.predict;

import io.ferry.coordinator.GenerationView;
import io.ferry.coordinator.JobView;
import io.ferry.model.Event;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** Every forecast of a job's time to established beside what then happened. */
public final class ForecastErrors {
    /** One forecast and its outcome; errors are signed, (forecast - actual) / actual. */
    /**
     * @param expectedWritten bytes the forecast expected the snapshot to write (-1: not said)
     * @param written         bytes it wrote, as its ranks reported them staged
     * @param captured        seconds from the request until every rank was captured, when the
     *                        forecast was made (measured, not forecast; NaN: not known)
     * @param othersLeft      bytes the job's other nodes still had to read for staging when its last rank was
     *                        captured ({@link GenerationView#othersLeftAtCapture}; 0 on one node)
     */
    public record Row(long generation, long rawBytes, int ranks, double predicted, double ideal, double actual,
                      long expectedWritten, long written, double captured, long othersLeft) {
        public double error() {
            return (predicted - actual) / actual;
        }

        /**
         * The error on the part that was forecast, after the capture: (forecast - actual) over the
         * actual time from capture to established; NaN where the capture time is not known.
         */
        public double errorAfterCapture() {
            return captured >= 0 && actual > captured ? (predicted - actual) / (actual - captured) : Double.NaN;
        }

        public double idealError() {
            return (ideal - actual) / actual;
        }
    }

    private ForecastErrors() {}

    /** The established generations that had a forecast at capture, in generation order. */
    public static List<Row> rows(JobView v) {
        return rows(v, 0);
    }

    /**
     * The established generations forecast again once their nodes had read {@code share} of their
     * bytes for staging (one of {@link StagingSoFar#MARKS}; 0: the forecasts at capture).
     */
    public static List<Row> rows(JobView v, double share) {
        List<Row> rows = new ArrayList<>();
        for (GenerationView g : v.generations()) {
            Optional<Event.PredictionMade> made = share == 0 ? g.prediction() : g.predictionAt(share);
            if (g.state() == GenerationView.State.ESTABLISHED && made.isPresent() && g.secondsToEstablished() > 0) {
                Event.PredictionMade p = made.get();
                rows.add(new Row(g.generation(), p.rawBytes(), p.ranks(), p.predictedSecondsToEstablished(),
                        p.idealSeconds(), g.secondsToEstablished(), p.writtenBytes(), g.storedBytes(),
                        g.secondsToCaptured(), g.othersLeftAtCapture()));
            }
        }
        return rows;
    }

    /**
     * The forecasts today's model makes from the same history, in generation order: each
     * established generation forecast as the live one is, once it was captured, from the
     * snapshots established by then (where the log does not say when it was captured: by its
     * request). For judging a change to the model on a recorded job.
     */
    public static List<Row> refit(JobView v) {
        List<Row> rows = new ArrayList<>();
        for (GenerationView g : v.generations()) {
            if (g.state() != GenerationView.State.ESTABLISHED || !(g.secondsToEstablished() > 0)
                    || g.requestedAtMillis() <= 0) {
                continue;
            }
            long asOf = g.capturedAtMillis() > 0 ? g.capturedAtMillis() : g.requestedAtMillis();
            Predictor.atCapture(v, g, asOf).ifPresent(p ->
                    rows.add(new Row(g.generation(), p.rawBytes(), p.ranks(), p.predictedSecondsToEstablished(),
                            p.idealSeconds(), g.secondsToEstablished(), p.writtenBytes(), g.storedBytes(),
                            g.secondsToCaptured(), g.othersLeftAtCapture())));
        }
        return rows;
    }

    /**
     * The forecasts today's model makes again at {@code mark} of the bytes read (one of {@link
     * StagingSoFar#MARKS}) from the same history: for each established generation forecast then, the
     * time it took to the mark plus the rest as the snapshots established by then took it from the same
     * mark ({@link Predictor#restAfterMark}), for the bytes the live forecast there expected it to write.
     * Left out: generations whose history did not yet say when its snapshots passed the mark. That is
     * the live forecast at 25%; at 50% and 75% the live one also blends in the nodes' staging rate,
     * which the log does not keep, so these rows are the history's part alone.
     */
    public static List<Row> refit(JobView v, double mark) {
        List<Row> rows = new ArrayList<>();
        for (GenerationView g : v.generations()) {
            Optional<Event.PredictionMade> live = g.predictionAt(mark);
            double atMark = g.secondsToMark(mark);
            if (g.state() != GenerationView.State.ESTABLISHED || !(g.secondsToEstablished() > 0)
                    || g.requestedAtMillis() <= 0 || live.isEmpty() || Double.isNaN(atMark)) {
                continue;
            }
            Event.PredictionMade p = live.get();
            long asOf = g.requestedAtMillis() + Math.round(atMark * 1000);
            double rest = Predictor.restAfterMark(v, g, mark, p.writtenBytes(), asOf);
            if (!Double.isNaN(rest)) {
                rows.add(new Row(g.generation(), p.rawBytes(), p.ranks(), atMark + rest, p.idealSeconds(),
                        g.secondsToEstablished(), p.writtenBytes(), g.storedBytes(), g.secondsToCaptured(),
                        g.othersLeftAtCapture()));
            }
        }
        return rows;
    }

    /**
     * The same rows forecast again by the model's form fitted in hindsight: one least-squares fit
     * of the time after the capture (against bytes written, rank count and, on several nodes, the bytes the
     * other nodes had left to read at the capture; weighted for relative error, as {@link Predictor} fits) to
     * every row's snapshot at once, its own included. (Without the third term, the reference for multi-node jobs
     * left out what their forecasts use, and was weaker than the model it was to bound.) What is
     * left of the error is how far these snapshots' times scatter beyond what their sizes explain
     * (a shared disk, a busy node): a reference that forecasts made before the fact, from fewer
     * snapshots and none of the later ones, can hardly be expected to beat. Empty for fewer than
     * {@link Predictor#WARM_UP} rows.
     */
    public static List<Row> hindsight(List<Row> rows) {
        if (rows.size() < Predictor.WARM_UP) {
            return List.of();
        }
        boolean byWritten = rows.stream().allMatch(r -> r.written() > 0);
        double[][] xs = new double[rows.size()][];
        double[] rest = new double[rows.size()];
        double[] weight = new double[rows.size()];
        for (int i = 0; i < rows.size(); i++) {
            Row r = rows.get(i);
            xs[i] = new double[]{byWritten ? r.written() : r.rawBytes(), r.ranks(), r.othersLeft()};
            rest[i] = r.actual() - captured(r);
            weight[i] = 1 / Math.max(1e-6, r.actual() * r.actual());
        }
        var fit = LeastSquares.fit(xs, rest, weight);
        List<Row> out = new ArrayList<>(rows.size());
        for (int i = 0; i < rows.size(); i++) {
            Row r = rows.get(i);
            double predicted = captured(r) + Math.max(0, fit.applyAsDouble(xs[i]));
            out.add(new Row(r.generation(), r.rawBytes(), r.ranks(), predicted, r.ideal(), r.actual(),
                    r.expectedWritten(), r.written(), r.captured(), r.othersLeft()));
        }
        return out;
    }

    /** Seconds to the capture where the log says them (and they fall within the whole), else 0: all of it is fitted. */
    private static double captured(Row r) {
        return r.captured() >= 0 && r.captured() <= r.actual() ? r.captured() : 0;
    }

    /** The q-quantile (0..1) of absolute values, nearest rank (the median averages the middle two); NaN for none. */
    public static double quantileAbs(List<Double> xs, double q) {
        if (xs.isEmpty()) {
            return Double.NaN;
        }
        if (q == 0.5) {
            return Stats.median(xs.stream().mapToDouble(Math::abs).toArray());
        }
        List<Double> a = xs.stream().map(Math::abs).sorted().toList();
        return a.get((int) Math.min(a.size() - 1, Math.floor(q * a.size())));
    }
}
