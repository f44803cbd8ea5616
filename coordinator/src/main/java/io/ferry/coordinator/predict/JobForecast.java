package io.ferry.coordinator.predict;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ferry.coordinator.GenerationView;
import io.ferry.coordinator.JobView;
import io.ferry.model.Event;
import io.ferry.model.Sizes;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * What the coordinator forecasts for a job (shown by {@code ferry status} and the HTTP API): the
 * snapshot in flight (its forecast and ETA), the next snapshot's stall and time to established,
 * the Young/Daly checkpoint interval, and when each node's cache fills.
 *
 * @param inFlight    the newest generation not yet established or failed, with a forecast
 * @param etaSeconds  seconds until the snapshot in flight should be established (may be < 0: late)
 * @param next        forecast for a next snapshot the size of the newest established one
 * @param stallSeconds checkpoint cost for Young/Daly: forecast stall, else the newest observed
 * @param mtbfSeconds given with --mtbf, or the job's run time over its recoveries, or NaN
 * @param mtbfSource  "given", "measured" or "unknown"
 * @param caches      per node, when its cache fills
 */
public record JobForecast(Optional<Event.PredictionMade> inFlight, double etaSeconds,
                          Optional<Event.PredictionMade> next, double stallSeconds, double mtbfSeconds,
                          String mtbfSource, List<CacheForecast> caches) {

    /** @param givenMtbf seconds, or NaN to measure it from the job's recoveries */
    public static JobForecast of(JobView v, double givenMtbf, long nowMillis) {
        Optional<GenerationView> latest = v.latest();
        Optional<Event.PredictionMade> inFlight = latest.filter(g -> g.state() == GenerationView.State.CAPTURED
                || g.state() == GenerationView.State.OPEN).flatMap(GenerationView::currentPrediction);
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
        List<CacheForecast> caches = v.caches().stream().map(c -> CacheForecast.of(v, c, nowMillis)).toList();
        return new JobForecast(inFlight, eta, next, stall, mtbf, source, caches);
    }

    public List<String> lines() {
        List<String> out = new ArrayList<>();
        inFlight.ifPresent(p -> out.add(String.format(Locale.ROOT,
                "generation %d in flight: forecast %.1f s to established%s, %s", p.generation(),
                p.predictedSecondsToEstablished(), p.readShare() > 0 ? String.format(Locale.ROOT,
                        " (made again at %.0f%% of its bytes read, %s to be written)", 100 * p.readShare(),
                        Sizes.format(p.writtenBytes())) : "",
                etaSeconds >= 0 ? String.format(Locale.ROOT, "ETA %.1f s", etaSeconds)
                        : String.format(Locale.ROOT, "%.1f s later than forecast", -etaSeconds))));
        next.ifPresentOrElse(p -> out.add(String.format(Locale.ROOT,
                        "next snapshot (%s, %d ranks): stall %.2f s, established %.1f s after the request"
                                + " (fill-time law ideal %.2f s; fitted on %d snapshots)",
                        Sizes.format(p.rawBytes()), p.ranks(), p.predictedStallSeconds(),
                        p.predictedSecondsToEstablished(), p.idealSeconds(), p.basedOn())),
                () -> out.add("no forecast yet: it needs " + Predictor.WARM_UP + " established snapshots"));
        if (!Double.isNaN(mtbfSeconds) && !Double.isNaN(stallSeconds)) {
            out.add(String.format(Locale.ROOT, "checkpoint interval for MTBF %.0f s (%s): Young %.0f s, Daly %.0f s",
                    mtbfSeconds, mtbfSource, Predictor.youngSeconds(stallSeconds, mtbfSeconds),
                    Predictor.dalySeconds(stallSeconds, mtbfSeconds)));
        } else {
            out.add("checkpoint interval: give --mtbf (no failures measured yet)");
        }
        caches.forEach(c -> out.add(c.line()));
        return out;
    }

    public void json(ObjectNode n) {
        inFlight.ifPresent(p -> n.putObject("inFlight").put("generation", p.generation())
                .put("predictedSecondsToEstablished", p.predictedSecondsToEstablished()).put("etaSeconds", etaSeconds)
                .put("readShare", p.readShare()).put("expectedWrittenBytes", p.writtenBytes()));
        next.ifPresent(p -> n.putObject("next").put("rawBytes", p.rawBytes()).put("ranks", p.ranks())
                .put("predictedStallSeconds", p.predictedStallSeconds())
                .put("predictedSecondsToEstablished", p.predictedSecondsToEstablished())
                .put("idealSeconds", p.idealSeconds()).put("basedOn", p.basedOn()));
        if (!Double.isNaN(mtbfSeconds) && !Double.isNaN(stallSeconds)) {
            n.put("mtbfSeconds", mtbfSeconds).put("mtbfSource", mtbfSource)
                    .put("youngIntervalSeconds", Predictor.youngSeconds(stallSeconds, mtbfSeconds))
                    .put("dalyIntervalSeconds", Predictor.dalySeconds(stallSeconds, mtbfSeconds));
        }
        var arr = n.putArray("caches");
        for (CacheForecast c : caches) {
            ObjectNode o = arr.addObject().put("node", c.node()).put("capacityBytes", c.report().capacityBytes())
                    .put("freeBytes", c.report().freeBytes()).put("jobBytes", c.report().jobBytes())
                    .put("generations", c.report().generations()).put("keepGenerations", c.report().keepGenerations())
                    .put("bytesPerGeneration", c.bytesPerGeneration()).put("storeDown", c.storeDown())
                    .put("neverFull", c.neverFull());
            if (!c.neverFull() && c.bytesPerGeneration() > 0) {
                o.put("fitsMoreGenerations", c.fitsMore());
                if (!Double.isNaN(c.secondsUntilFull())) {
                    o.put("secondsUntilFull", c.secondsUntilFull());
                }
            }
        }
    }
}
