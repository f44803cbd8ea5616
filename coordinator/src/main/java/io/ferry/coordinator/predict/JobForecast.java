package io.ferry.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ferry.coordinator.GenerationView;
import io.ferry.coordinator.JobView;
import io.ferry.coordinator.predict.Predictor;
import io.ferry.model.Event;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * What {@code ferry status} forecasts for a job: the snapshot in flight (its forecast and ETA),
 * the next snapshot's stall and time to established, and the Young/Daly checkpoint interval.
 *
 * @param inFlight    the newest generation not yet established or failed, with a forecast
 * @param etaSeconds  seconds until the snapshot in flight should be established (may be < 0: late)
 * @param next        forecast for a next snapshot the size of the newest established one
 * @param stallSeconds checkpoint cost for Young/Daly: forecast stall, else the newest observed
 * @param mtbfSeconds given with --mtbf, or the job's run time over its recoveries, or NaN
 * @param mtbfSource  "given", "measured" or "unknown"
 */
record Forecast(Optional<Event.PredictionMade> inFlight, double etaSeconds, Optional<Event.PredictionMade> next,
                double stallSeconds, double mtbfSeconds, String mtbfSource) {

    static Forecast of(JobView v, double givenMtbf, long nowMillis) {
        Optional<GenerationView> latest = v.latest();
        Optional<Event.PredictionMade> inFlight = latest.filter(g -> g.state() == GenerationView.State.CAPTURED
                || g.state() == GenerationView.State.OPEN).flatMap(GenerationView::prediction);
        double eta = inFlight.map(p -> latest.get().requestedAtMillis() / 1000.0 + p.predictedSecondsToEstablished()
                - nowMillis / 1000.0).orElse(Double.NaN);
        // The next snapshot is taken to be the size of the newest established one.
        Optional<Event.PredictionMade> next = v.newestEstablished().filter(g -> g.rawBytes() > 0)
                .flatMap(g -> Predictor.predict(v, v.nextGeneration(), g.rawBytes(), Math.max(1, g.capturedRanks())));
        double stall = next.map(Event.PredictionMade::predictedStallSeconds)
                .orElse(latest.map(GenerationView::maxStallSeconds).orElse(Double.NaN));
        double mtbf = givenMtbf;
        String source = "given";
        if (Double.isNaN(mtbf)) {
            double ran = v.runSeconds(nowMillis);
            mtbf = v.recoveries() > 0 && ran > 0 ? ran / v.recoveries() : Double.NaN;
            source = Double.isNaN(mtbf) ? "unknown" : "measured";
        }
        return new Forecast(inFlight, eta, next, stall, mtbf, source);
    }

    List<String> lines() {
        List<String> out = new ArrayList<>();
        inFlight.ifPresent(p -> out.add(String.format(Locale.ROOT,
                "generation %d in flight: forecast %.1f s to established, %s", p.generation(),
                p.predictedSecondsToEstablished(), etaSeconds >= 0 ? String.format(Locale.ROOT, "ETA %.1f s", etaSeconds)
                        : String.format(Locale.ROOT, "%.1f s later than forecast", -etaSeconds))));
        next.ifPresentOrElse(p -> out.add(String.format(Locale.ROOT,
                        "next snapshot (%s, %d ranks): stall %.2f s, established %.1f s after the request"
                                + " (fill-time law ideal %.2f s; fitted on %d snapshots)",
                        io.ferry.model.Sizes.format(p.rawBytes()), p.ranks(), p.predictedStallSeconds(),
                        p.predictedSecondsToEstablished(), p.idealSeconds(), p.basedOn())),
                () -> out.add("no forecast yet: it needs " + Predictor.WARM_UP + " established snapshots"));
        if (!Double.isNaN(mtbfSeconds) && !Double.isNaN(stallSeconds)) {
            out.add(String.format(Locale.ROOT, "checkpoint interval for MTBF %.0f s (%s): Young %.0f s, Daly %.0f s",
                    mtbfSeconds, mtbfSource, Predictor.youngSeconds(stallSeconds, mtbfSeconds),
                    Predictor.dalySeconds(stallSeconds, mtbfSeconds)));
        } else {
            out.add("checkpoint interval: give --mtbf (no failures measured yet)");
        }
        return out;
    }

    void json(ObjectNode n) {
        inFlight.ifPresent(p -> n.putObject("inFlight").put("generation", p.generation())
                .put("predictedSecondsToEstablished", p.predictedSecondsToEstablished()).put("etaSeconds", etaSeconds));
        next.ifPresent(p -> n.putObject("next").put("rawBytes", p.rawBytes()).put("ranks", p.ranks())
                .put("predictedStallSeconds", p.predictedStallSeconds())
                .put("predictedSecondsToEstablished", p.predictedSecondsToEstablished())
                .put("idealSeconds", p.idealSeconds()).put("basedOn", p.basedOn()));
        if (!Double.isNaN(mtbfSeconds) && !Double.isNaN(stallSeconds)) {
            n.put("mtbfSeconds", mtbfSeconds).put("mtbfSource", mtbfSource)
                    .put("youngIntervalSeconds", Predictor.youngSeconds(stallSeconds, mtbfSeconds))
                    .put("dalyIntervalSeconds", Predictor.dalySeconds(stallSeconds, mtbfSeconds));
        }
    }
}
