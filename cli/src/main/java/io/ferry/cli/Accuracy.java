package io.ferry.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ferry.coordinator.JobView;
import io.ferry.coordinator.predict.ForecastErrors;
import io.ferry.coordinator.predict.ForecastErrors.Row;
import io.ferry.coordinator.predict.StagingSoFar;
import io.ferry.model.Names;
import io.ferry.model.Sizes;

import java.io.IOException;
import java.io.PrintStream;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** {@code ferry plan --accuracy JOB}: the coordinator's forecasts beside what happened. */
final class Accuracy {
    private Accuracy() {}

    static int print(String job, LogOptions log, boolean json, boolean refit, PrintStream out) throws IOException {
        Names.requireJob(job);
        JobView v;
        try (LogConnection c = log.open()) {
            // With the staging reports the log still keeps: the marks a refit forecasts again from, and the other
            // nodes' load at each capture, which the hindsight fit takes as the forecasts do.
            v = c.replayWithStaging().get(job)
                    .orElseThrow(() -> new IllegalArgumentException("no job " + job + " in the log"));
        }
        List<Row> rows = refit ? ForecastErrors.refit(v) : ForecastErrors.rows(v);
        List<Double> err = rows.stream().map(Row::error).toList();
        List<Double> ideal = rows.stream().map(Row::idealError).toList();
        List<Double> rest = rows.stream().map(Row::errorAfterCapture).filter(d -> !Double.isNaN(d)).toList();
        List<Double> hindsight = ForecastErrors.hindsight(rows).stream().map(Row::error).toList();
        if (json) {
            ObjectMapper m = new ObjectMapper();
            ObjectNode n = m.createObjectNode().put("job", job).put("refit", refit).put("forecasts", rows.size())
                    .put("medianAbsError", ForecastErrors.quantileAbs(err, 0.5))
                    .put("p90AbsError", ForecastErrors.quantileAbs(err, 0.9))
                    .put("idealMedianAbsError", ForecastErrors.quantileAbs(ideal, 0.5))
                    .put("afterCaptureMedianAbsError", ForecastErrors.quantileAbs(rest, 0.5))
                    .put("afterCaptureP90AbsError", ForecastErrors.quantileAbs(rest, 0.9))
                    .put("hindsightMedianAbsError", ForecastErrors.quantileAbs(hindsight, 0.5))
                    .put("hindsightP90AbsError", ForecastErrors.quantileAbs(hindsight, 0.9));
            ArrayNode during = n.putArray("duringStaging");
            for (double mark : StagingSoFar.MARKS) {
                List<Double> e = atMark(v, mark, refit).stream().map(Row::error).toList();
                during.addObject().put("readShare", mark).put("forecasts", e.size())
                        .put("medianAbsError", ForecastErrors.quantileAbs(e, 0.5))
                        .put("p90AbsError", ForecastErrors.quantileAbs(e, 0.9));
            }
            ArrayNode a = n.putArray("rows");
            for (Row r : rows) {
                a.addObject().put("generation", r.generation()).put("rawBytes", r.rawBytes()).put("ranks", r.ranks())
                        .put("predictedSeconds", r.predicted()).put("idealSeconds", r.ideal())
                        .put("actualSeconds", r.actual()).put("error", r.error()).put("idealError", r.idealError())
                        .put("expectedWrittenBytes", r.expectedWritten()).put("writtenBytes", r.written())
                        .put("capturedSeconds", r.captured()).put("errorAfterCapture", r.errorAfterCapture());
            }
            out.println(m.writerWithDefaultPrettyPrinter().writeValueAsString(n));
            return 0;
        }
        out.printf(Locale.ROOT, refit
                ? "Forecasts of time to established for %s made again by this version's model from the same history%n"
                : "Forecasts of time to established for %s (from the request; forecast made once captured:"
                + " the capture's seconds are measured, the rest forecast)%n", job);
        Map<Long, Row> quarter = new HashMap<>();
        atMark(v, StagingSoFar.MARKS[0], refit).forEach(r -> quarter.put(r.generation(), r));
        out.println(
                "| generation | raw | ranks | written: expected | written | captured s | forecast s | actual s | error"
                + " | error after capture | at 25% read: written expected | forecast s | error |"
                + " fill-time law s | law error |");
        out.println("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (Row r : rows) {
            Row q = quarter.get(r.generation());
            out.printf(Locale.ROOT,
                    "| %d | %s | %d | %s | %s | %s | %.2f | %.2f | %+.1f%% | %s | %s | %s | %s | %.2f | %+.1f%% |%n",
                    r.generation(), Sizes.format(r.rawBytes()), r.ranks(),
                    r.expectedWritten() < 0 ? "-" : Sizes.format(r.expectedWritten()), Sizes.format(r.written()),
                    Double.isNaN(r.captured()) ? "-" : String.format(Locale.ROOT, "%.2f", r.captured()), r.predicted(),
                    r.actual(), 100 * r.error(), Double.isNaN(r.errorAfterCapture()) ? "-"
                            : String.format(Locale.ROOT, "%+.1f%%", 100 * r.errorAfterCapture()),
                    q == null ? "-" : Sizes.format(q.expectedWritten()),
                    q == null ? "-" : String.format(Locale.ROOT, "%.2f", q.predicted()),
                    q == null ? "-" : String.format(Locale.ROOT, "%+.1f%%", 100 * q.error()),
                    r.ideal(), 100 * r.idealError());
        }
        out.printf(Locale.ROOT, "%d forecasts: median absolute error %.1f%% (90th percentile %.1f%%);"
                        + " the fill-time law alone: median %.1f%%%n", rows.size(),
                        100 * ForecastErrors.quantileAbs(err, 0.5),
                100 * ForecastErrors.quantileAbs(err, 0.9), 100 * ForecastErrors.quantileAbs(ideal, 0.5));
        for (double mark : StagingSoFar.MARKS) {
            List<Double> e = atMark(v, mark, refit).stream().map(Row::error).toList();
            if (!e.isEmpty()) {
                out.printf(Locale.ROOT, "forecast again at %.0f%% of the bytes read for staging%s (%d forecasts):"
                                + " median absolute error %.1f%% (90th percentile %.1f%%)%n", 100 * mark,
                        refit && mark > StagingSoFar.MARKS[0] ? ", the history's part alone" : "", e.size(),
                        100 * ForecastErrors.quantileAbs(e, 0.5), 100 * ForecastErrors.quantileAbs(e, 0.9));
            }
        }
        if (!rest.isEmpty()) {
            out.printf(Locale.ROOT, "the part forecast (capture to established) alone: median absolute error %.1f%%"
                    + " (90th percentile %.1f%%)%n", 100 * ForecastErrors.quantileAbs(rest, 0.5),
                    100 * ForecastErrors.quantileAbs(rest, 0.9));
        }
        if (!hindsight.isEmpty()) {
            out.printf(Locale.ROOT,
                    "the same model fitted in hindsight to all %d snapshots at once: median absolute error %.1f%%"
                            + " (90th percentile %.1f%%), the scatter their sizes do not explain%n", hindsight.size(),
                    100 * ForecastErrors.quantileAbs(hindsight, 0.5), 100 * ForecastErrors.quantileAbs(hindsight, 0.9));
        }
        return 0;
    }

    /**
     * The forecasts made again at {@code mark} of the bytes read: as the log has them, or with {@code refit}
     * as this version's model makes them from the same history (at 50% and 75%, without the nodes' rate).
     */
    private static List<Row> atMark(JobView v, double mark, boolean refit) {
        return refit ? ForecastErrors.refit(v, mark) : ForecastErrors.rows(v, mark);
    }
}
