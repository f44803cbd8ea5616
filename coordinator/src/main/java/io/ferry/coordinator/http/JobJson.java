package io.ferry.coordinator.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ferry.coordinator.GenerationView;
import io.ferry.coordinator.JobView;
import io.ferry.coordinator.predict.JobForecast;
import io.ferry.coordinator.predict.StagingSoFar;
import io.ferry.model.Event;

/**
 * A job as JSON: the same document for {@code ferry status --json} and the HTTP API, so the
 * two never disagree. Build it inside {@code Coordinator.query} (a {@link JobView} is not
 * thread-safe).
 */
public final class JobJson {
    private JobJson() {}

    /** "running", "finished" or "failed". */
    public static String state(JobView v) {
        return v.finished() ? (v.success().orElse(false) ? "finished" : "failed") : "running";
    }

    /** State, newest snapshots, store health, forecasts (with {@code mtbfSeconds} NaN: measured). */
    public static ObjectNode summary(JobView v, double mtbfSeconds, long nowMillis) {
        ObjectNode n = JsonNodeFactory.instance.objectNode().put("job", v.job()).put("ranks", v.ranks())
                .put("state", state(v)).put("recoveries", v.recoveries());
        v.settings().ifPresent(s -> n.put("intervalSeconds", s.intervalMillis() / 1000.0).put("store", s.store())
                .put("node", s.node()));
        v.newestEstablished().ifPresent(g -> n.put("newestEstablished", g.generation()));
        v.latest().ifPresent(g -> n.put("latestGeneration", g.generation()).put("latestState", g.state().toString())
                .put("problem", g.problem()));
        ArrayNode stragglers = n.putArray("stragglers");
        v.stragglers().forEach(s -> stragglers.addObject().put("node", s.node()).put("ranks", s.ranks().toString())
                .put("count", s.ranks().size()).put("phase", s.phase()));
        JobForecast.of(v, mtbfSeconds, nowMillis).json(n.putObject("forecast"));
        ArrayNode stores = n.putArray("stores");
        for (Event.StoreHealthReported h : v.storeHealth()) {
            stores.addObject().put("node", h.node()).put("store", h.store()).put("circuit", h.circuit())
                    .put("calls", h.calls()).put("retries", h.retries()).put("failed", h.failed())
                    .put("rejected", h.rejected());
        }
        return n;
    }

    /** Every generation: state, sizes, stall, time to established, and the forecast made for it. */
    public static ArrayNode generations(JobView v) {
        ArrayNode a = JsonNodeFactory.instance.arrayNode();
        for (GenerationView g : v.generations()) {
            ObjectNode o = a.addObject().put("generation", g.generation()).put("state", g.state().toString())
                    .put("capturedRanks", g.capturedRanks()).put("stagedRanks", g.stagedRanks())
                    .put("rawBytes", g.rawBytes()).put("storedBytes", g.storedBytes())
                    .put("partnerRanks", g.partnerRanks()).put("partnerBytes", g.partnerBytes())
                    .put("maxStallSeconds", g.maxStallSeconds()).put("problem", g.problem());
            if (!Double.isNaN(g.secondsToEstablished())) {
                o.put("secondsToEstablished", g.secondsToEstablished());
            }
            g.prediction().ifPresent(p -> o.putObject("prediction")
                    .put("predictedSecondsToEstablished", p.predictedSecondsToEstablished())
                    .put("predictedStallSeconds", p.predictedStallSeconds()).put("idealSeconds", p.idealSeconds())
                    .put("basedOn", p.basedOn()));
            for (double mark : StagingSoFar.MARKS) {
                g.predictionAt(mark).ifPresent(p -> o.withArray("stagingPredictions").addObject().put("readShare", mark)
                        .put("predictedSecondsToEstablished", p.predictedSecondsToEstablished())
                        .put("expectedWrittenBytes", p.writtenBytes()));
            }
        }
        return a;
    }
}
