package io.ferry.coordinator.http;

import io.ferry.coordinator.GenerationView;
import io.ferry.coordinator.JobView;
import io.ferry.coordinator.Jobs;
import io.ferry.coordinator.predict.CacheForecast;
import io.ferry.coordinator.predict.ForecastErrors;
import io.ferry.coordinator.predict.JobForecast;
import io.ferry.model.Event;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The coordinator's state in the Prometheus text exposition format (version 0.0.4). */
final class Metrics {
    private final Map<String, List<String>> samples = new LinkedHashMap<>();
    private final Map<String, String[]> meta = new LinkedHashMap<>();

    private Metrics() {}

    static String render(Jobs jobs, long malformedEvents, long nowMillis) {
        Metrics m = new Metrics();
        m.family("ferry_malformed_events_total", "counter",
                "Events the coordinator could not read (parked on the dead-letter topic).");
        m.sample("ferry_malformed_events_total", "", malformedEvents);
        for (JobView v : jobs.all()) {
            m.job(v, nowMillis);
        }
        StringBuilder out = new StringBuilder();
        for (var e : m.meta.entrySet()) {
            List<String> lines = m.samples.getOrDefault(e.getKey(), List.of());
            if (lines.isEmpty()) {
                continue;
            }
            out.append("# HELP ").append(e.getKey()).append(' ').append(e.getValue()[1]).append('\n');
            out.append("# TYPE ").append(e.getKey()).append(' ').append(e.getValue()[0]).append('\n');
            lines.forEach(l -> out.append(l).append('\n'));
        }
        return out.toString();
    }

    private void job(JobView v, long now) {
        String job = labels("job", v.job());
        family("ferry_job_running", "gauge", "1 while the job runs, 0 once finished or failed.");
        sample("ferry_job_running", job, v.finished() ? 0 : 1);
        family("ferry_job_ranks", "gauge", "Ranks of the job.");
        sample("ferry_job_ranks", job, v.ranks());
        family("ferry_job_recoveries_total", "counter", "Rollbacks of the job to an established snapshot.");
        sample("ferry_job_recoveries_total", job, v.recoveries());
        // A gauge: a generation moves from OPEN to CAPTURED to ESTABLISHED, so a state's count also falls.
        family("ferry_snapshots", "gauge", "Generations now in each state.");
        for (GenerationView.State s : GenerationView.State.values()) {
            sample("ferry_snapshots", labels("job", v.job(), "state", s.toString()),
                    v.generations().stream().filter(g -> g.state() == s).count());
        }
        v.newestEstablished().ifPresent(g -> {
            family("ferry_newest_established_generation", "gauge", "What a restart would use.");
            sample("ferry_newest_established_generation", job, g.generation());
            family("ferry_snapshot_seconds_to_established", "gauge",
                    "Newest established snapshot: request to established.");
            sample("ferry_snapshot_seconds_to_established", job, g.secondsToEstablished());
            family("ferry_snapshot_stall_seconds", "gauge", "Newest established snapshot: longest rank stall.");
            sample("ferry_snapshot_stall_seconds", job, g.maxStallSeconds());
            family("ferry_snapshot_raw_bytes", "gauge", "Newest established snapshot: bytes captured.");
            sample("ferry_snapshot_raw_bytes", job, g.rawBytes());
            family("ferry_snapshot_stored_bytes", "gauge", "Newest established snapshot: bytes on the store.");
            sample("ferry_snapshot_stored_bytes", job, g.storedBytes());
        });
        JobForecast f = JobForecast.of(v, Double.NaN, now);
        f.next().ifPresent(p -> {
            family("ferry_forecast_seconds_to_established", "gauge", "Forecast for the next snapshot.");
            sample("ferry_forecast_seconds_to_established", job, p.predictedSecondsToEstablished());
            family("ferry_forecast_stall_seconds", "gauge", "Forecast stall of the next snapshot.");
            sample("ferry_forecast_stall_seconds", job, p.predictedStallSeconds());
        });
        List<Double> errors = new ArrayList<>();
        ForecastErrors.rows(v).forEach(r -> errors.add(r.error()));
        if (!errors.isEmpty()) {
            family("ferry_forecast_abs_error_median", "gauge",
                    "Median |forecast - actual| / actual of time to established.");
            sample("ferry_forecast_abs_error_median", job, ForecastErrors.quantileAbs(errors, 0.5));
        }
        for (CacheForecast c : f.caches()) {
            String node = labels("job", v.job(), "node", c.node());
            family("ferry_cache_free_bytes", "gauge", "Free bytes on the file system of the node's cache.");
            sample("ferry_cache_free_bytes", node, c.report().freeBytes());
            family("ferry_cache_job_bytes", "gauge", "Bytes the job holds in the node's cache.");
            sample("ferry_cache_job_bytes", node, c.report().jobBytes());
            c.fullInSeconds().ifPresent(s -> {
                family("ferry_cache_full_in_seconds", "gauge",
                        "Forecast: seconds until the node's cache is full (absent: never).");
                sample("ferry_cache_full_in_seconds", node, s);
            });
        }
        for (Event.StoreHealthReported h : v.storeHealth()) {
            family("ferry_store_down", "gauge", "1 while the node's store circuit is open.");
            sample("ferry_store_down", labels("job", v.job(), "node", h.node(), "store", h.store()),
                    "OPEN".equals(h.circuit()) ? 1 : 0);
        }
    }

    private void family(String name, String type, String help) {
        meta.putIfAbsent(name, new String[]{type, help});
    }

    private void sample(String name, String labels, double value) {
        String v = Double.isNaN(value) ? "NaN" : Double.isInfinite(value) ? (value > 0 ? "+Inf" : "-Inf")
                : value == Math.rint(value) && Math.abs(value) < 1e15 ? Long.toString((long) value)
                : String.format(Locale.ROOT, "%.6g", value);
        samples.computeIfAbsent(name, k -> new ArrayList<>()).add(name + labels + " " + v);
    }

    /** {@code {k="v",...}} with values escaped as the format requires. */
    static String labels(String... kv) {
        StringBuilder b = new StringBuilder("{");
        for (int i = 0; i < kv.length; i += 2) {
            if (i > 0) {
                b.append(',');
            }
            b.append(kv[i]).append("=\"").append(kv[i + 1].replace("\\", "\\\\").replace("\"", "\\\"")
                    .replace("\n", "\\n")).append('"');
        }
        return b.append('}').toString();
    }
}
