package io.ferry.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ferry.coordinator.GenerationView;
import io.ferry.coordinator.JobView;
import io.ferry.model.Event;
import io.ferry.model.Names;
import io.ferry.model.Sizes;

import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** {@code ferry plan --accuracy JOB}: the coordinator's forecasts beside what happened. */
final class Accuracy {
    /** One forecast and its outcome; errors are signed, (forecast - actual) / actual. */
    record Row(long generation, long rawBytes, int ranks, double predicted, double ideal, double actual) {
        double error() {
            return (predicted - actual) / actual;
        }

        double idealError() {
            return (ideal - actual) / actual;
        }
    }

    private Accuracy() {}

    static List<Row> rows(JobView v) {
        List<Row> rows = new ArrayList<>();
        for (GenerationView g : v.generations()) {
            if (g.state() == GenerationView.State.ESTABLISHED && g.prediction().isPresent()
                    && g.secondsToEstablished() > 0) {
                Event.PredictionMade p = g.prediction().get();
                rows.add(new Row(g.generation(), p.rawBytes(), p.ranks(), p.predictedSecondsToEstablished(),
                        p.idealSeconds(), g.secondsToEstablished()));
            }
        }
        return rows;
    }

    /** The q-quantile (0..1) of absolute values, nearest rank; NaN for none. */
    static double quantileAbs(List<Double> xs, double q) {
        if (xs.isEmpty()) {
            return Double.NaN;
        }
        List<Double> a = xs.stream().map(Math::abs).sorted().toList();
        if (q == 0.5 && a.size() % 2 == 0) {
            return (a.get(a.size() / 2 - 1) + a.get(a.size() / 2)) / 2;
        }
        return a.get((int) Math.min(a.size() - 1, Math.floor(q * a.size())));
    }

    static int print(String job, LogOptions log, boolean json, PrintStream out) throws IOException {
        Names.requireJob(job);
        JobView v;
        try (LogConnection c = log.open()) {
            v = c.replay().get(job).orElseThrow(() -> new IllegalArgumentException("no job " + job + " in the log"));
        }
        List<Row> rows = rows(v);
        List<Double> err = rows.stream().map(Row::error).toList();
        List<Double> ideal = rows.stream().map(Row::idealError).toList();
        if (json) {
            ObjectMapper m = new ObjectMapper();
            ObjectNode n = m.createObjectNode().put("job", job).put("forecasts", rows.size())
                    .put("medianAbsError", quantileAbs(err, 0.5)).put("p90AbsError", quantileAbs(err, 0.9))
                    .put("idealMedianAbsError", quantileAbs(ideal, 0.5));
            ArrayNode a = n.putArray("rows");
            for (Row r : rows) {
                a.addObject().put("generation", r.generation()).put("rawBytes", r.rawBytes()).put("ranks", r.ranks())
                        .put("predictedSeconds", r.predicted()).put("idealSeconds", r.ideal())
                        .put("actualSeconds", r.actual()).put("error", r.error()).put("idealError", r.idealError());
            }
            out.println(m.writerWithDefaultPrettyPrinter().writeValueAsString(n));
            return 0;
        }
        out.printf(Locale.ROOT, "Forecasts of time to established for %s (from the request; forecast made once captured)%n", job);
        out.println("| generation | raw | ranks | forecast s | actual s | error | fill-time law s | law error |");
        out.println("|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (Row r : rows) {
            out.printf(Locale.ROOT, "| %d | %s | %d | %.2f | %.2f | %+.1f%% | %.2f | %+.1f%% |%n", r.generation(),
                    Sizes.format(r.rawBytes()), r.ranks(), r.predicted(), r.actual(), 100 * r.error(), r.ideal(),
                    100 * r.idealError());
        }
        out.printf(Locale.ROOT, "%d forecasts: median absolute error %.1f%% (90th percentile %.1f%%);"
                        + " the fill-time law alone: median %.1f%%%n", rows.size(), 100 * quantileAbs(err, 0.5),
                100 * quantileAbs(err, 0.9), 100 * quantileAbs(ideal, 0.5));
        return 0;
    }
}
