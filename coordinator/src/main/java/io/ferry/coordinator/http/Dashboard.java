package io.ferry.coordinator.http;

import io.ferry.coordinator.GenerationView;
import io.ferry.coordinator.JobView;
import io.ferry.coordinator.Jobs;
import io.ferry.coordinator.predict.CacheForecast;
import io.ferry.coordinator.predict.ForecastErrors;
import io.ferry.coordinator.predict.JobForecast;
import io.ferry.model.Sizes;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import static io.ferry.coordinator.http.Svg.esc;

/**
 * The dashboard page: per job, a chart of each snapshot's time to established beside the
 * forecast made for it and the fill-time law's ideal, a chart of the stall, a gauge per node
 * cache with its fill forecast (a map of squares, one per node, beyond {@link #GAUGES_UP_TO}
 * nodes), each node's staging bandwidth over time ({@link NodePanel}), the restart history
 * ({@link RestartPanel}) and the newest snapshots. Plain HTML with inline SVG, no scripts; it
 * reloads itself every 5 s.
 */
final class Dashboard {
    /** Generations shown per chart. */
    static final int SHOWN = 40;
    /** Above this many nodes, the node caches are drawn as a map of squares rather than a gauge each. */
    static final int GAUGES_UP_TO = 4;
    private static final int W = Svg.W;
    private static final int PAD = Svg.PAD;

    private Dashboard() {}

    static String render(Jobs jobs, long nowMillis) {
        StringBuilder b = new StringBuilder();
        b.append("<!doctype html><html><head><meta charset=\"utf-8\"><meta http-equiv=\"refresh\" content=\"5\">")
                .append("<title>Ferry</title><style>body{font:14px sans-serif;margin:2em;color:#222}")
                .append("h2{margin-bottom:.2em}.muted{color:#777}table{border-collapse:collapse}")
                .append("td,th{padding:2px 8px;text-align:right;border-bottom:1px solid #eee}")
                .append(".bad{color:#b00}svg{display:block;margin:.5em 0}</style></head><body>")
                .append("<h1>Ferry</h1><p class=\"muted\">coordinator dashboard; JSON at <a"
                        + " href=\"/api/jobs\">/api/jobs</a>,")
                .append(" metrics at <a href=\"/metrics\">/metrics</a></p>");
        if (jobs.all().isEmpty()) {
            b.append("<p>No jobs in the log yet.</p>");
        }
        for (JobView v : jobs.all()) {
            job(b, v, nowMillis);
        }
        return b.append("</body></html>").toString();
    }

    private static void job(StringBuilder b, JobView v, long now) {
        b.append("<h2>").append(esc(v.job())).append("</h2><p>").append(JobJson.state(v)).append(", ")
                .append(v.ranks()).append(" ranks, newest established generation ")
                .append(v.newestEstablished().map(g -> Long.toString(g.generation())).orElse("none"))
                .append(v.recoveries() > 0 ? ", " + v.recoveries() + " recoveries" : "").append("</p><ul>");
        JobForecast f = JobForecast.of(v, Double.NaN, now);
        boolean manyNodes = f.caches().size() > GAUGES_UP_TO;
        for (String line : f.lines()) {
            if (!(manyNodes && line.startsWith("cache on "))) { // many nodes: the node map below says it
                b.append("<li>").append(esc(line)).append("</li>");
            }
        }
        b.append("</ul>");
        stragglers(b, v);
        List<GenerationView> gens = new ArrayList<>(v.generations());
        gens = gens.subList(Math.max(0, gens.size() - SHOWN), gens.size());
        List<ForecastErrors.Row> rows = ForecastErrors.rows(v);
        if (!rows.isEmpty()) {
            List<Double> err = rows.stream().map(ForecastErrors.Row::error).toList();
            b.append(String.format(Locale.ROOT,
                    "<p>%d forecasts: median error %.1f%%; the fill-time law alone %.1f%%</p>",
                    rows.size(), 100 * ForecastErrors.quantileAbs(err, 0.5),
                    100 * ForecastErrors.quantileAbs(rows.stream().map(ForecastErrors.Row::idealError).toList(), 0.5)));
        }
        b.append("<b>Time to established</b> <span class=\"muted\">bars: actual (green established, red failed,")
                .append(" grey in flight); black tick: forecast; dashed blue: fill-time law</span>");
        timeChart(b, gens);
        b.append("<b>Stall</b> <span class=\"muted\">longest rank stall per generation</span>");
        stallChart(b, gens);
        NodePanel.bandwidth(b, gens);
        if (manyNodes) {
            NodePanel.cacheMap(b, v);
            f.caches().stream().filter(c -> !c.neverFull() && c.bytesPerGeneration() > 0).limit(5)
                    .forEach(c -> b.append("<p class=\"bad\">").append(esc(c.node() + ": " + c.line())).append("</p>"));
        } else {
            for (CacheForecast c : f.caches()) {
                cacheGauge(b, c);
            }
        }
        RestartPanel.render(b, v);
        table(b, gens);
    }

    /** The nodes the in-flight generation waits for: one bar per node, length = its ranks still missing. */
    private static void stragglers(StringBuilder b, JobView v) {
        List<JobView.Straggler> s = v.stragglers();
        if (s.isEmpty()) {
            return;
        }
        List<JobView.Straggler> shown = s.subList(0, Math.min(8, s.size()));
        int most = shown.get(0).ranks().size();
        b.append("<b>Waiting for</b> <span class=\"muted\">").append(esc(v.stragglersLine(8).orElse("")))
                .append("</span><svg width=\"640\" height=\"").append(18 * shown.size() + 4).append("\">");
        for (int i = 0; i < shown.size(); i++) {
            JobView.Straggler x = shown.get(i);
            int w = (int) Math.max(2, 420.0 * x.ranks().size() / most);
            b.append("<text x=\"0\" y=\"").append(18 * i + 14).append("\" font-size=\"12\">").append(esc(x.node()))
                    .append("</text><rect x=\"140\" y=\"").append(18 * i + 3).append("\" width=\"").append(w)
                    .append("\" height=\"13\" fill=\"").append(x.phase().equals("capture") ? "#d9822b" : "#8a6bbf")
                    .append("\"><title>").append(esc(x.node() + ": ranks " + x.ranks() + " to " + x.phase()))
                    .append("</title></rect><text x=\"").append(146 + w).append("\" y=\"").append(18 * i + 14)
                    .append("\" font-size=\"12\">").append(x.ranks().size()).append(' ').append(x.phase())
                    .append("</text>");
        }
        b.append("</svg>");
    }

    private static void timeChart(StringBuilder b, List<GenerationView> gens) {
        double max = 0;
        for (GenerationView g : gens) {
            max = Math.max(max, Svg.finite(g.secondsToEstablished()));
            if (g.prediction().isPresent()) {
                max = Math.max(max, Svg.finite(g.prediction().get().predictedSecondsToEstablished()));
                max = Math.max(max, Svg.finite(g.prediction().get().idealSeconds()));
            }
        }
        double top = max;
        Svg.start(b, top, "s");
        double slot = (double) (W - PAD) / Math.max(1, gens.size());
        for (int i = 0; i < gens.size(); i++) {
            GenerationView g = gens.get(i);
            double x = PAD + i * slot;
            double actual = Svg.finite(g.secondsToEstablished());
            String color = switch (g.state()) {
                case ESTABLISHED -> "#4a4";
                case FAILED -> "#c33";
                default -> "#bbb";
            };
            double shown = g.state() == GenerationView.State.FAILED ? max * 0.05 : actual;
            Svg.bar(b, x, slot, shown, max, color, "generation " + g.generation() + ": " + g.state()
                    + (actual > 0 ? String.format(Locale.ROOT, ", %.2f s", actual) : ""));
            g.prediction().ifPresent(p -> {
                Svg.tick(b, x, slot, p.predictedSecondsToEstablished(), top, "#000", "");
                Svg.tick(b, x, slot, p.idealSeconds(), top, "#36c", " stroke-dasharray=\"3,2\"");
            });
            Svg.label(b, x, slot, g.generation(), gens.size());
        }
        b.append("</svg>");
    }

    private static void stallChart(StringBuilder b, List<GenerationView> gens) {
        double max = gens.stream().mapToDouble(g -> Svg.finite(g.maxStallSeconds())).max().orElse(0);
        Svg.start(b, max, "s");
        double slot = (double) (W - PAD) / Math.max(1, gens.size());
        for (int i = 0; i < gens.size(); i++) {
            GenerationView g = gens.get(i);
            double x = PAD + i * slot;
            Svg.bar(b, x, slot, g.maxStallSeconds(), max, "#e90",
                    String.format(Locale.ROOT, "generation %d: stall %.3f s, %s",
                    g.generation(), g.maxStallSeconds(), Sizes.format(g.rawBytes())));
            Svg.label(b, x, slot, g.generation(), gens.size());
        }
        b.append("</svg>");
    }

    /** A bar for the file system: the job's bytes, other files, free; a tick at the retention's peak. */
    private static void cacheGauge(StringBuilder b, CacheForecast c) {
        double cap = Math.max(1, c.report().capacityBytes());
        double job = c.report().jobBytes() / cap * (W - PAD);
        double others = Math.max(0, cap - c.report().freeBytes() - c.report().jobBytes()) / cap * (W - PAD);
        b.append("<b>Cache on ").append(esc(c.node())).append("</b> <span class=\"muted\">green: this job, grey:")
                .append(" other files, white: free; black tick: this job's peak under retention</span>")
                .append(String.format(Locale.ROOT,
                        "<svg width=\"%d\" height=\"34\"><rect x=\"%d\" y=\"4\" width=\"%d\"", W, PAD, W - PAD))
                .append(" height=\"20\" fill=\"#fff\" stroke=\"#888\"/>")
                .append(String.format(Locale.ROOT,
                        "<rect x=\"%d\" y=\"4\" width=\"%.1f\" height=\"20\" fill=\"#bbb\"/>", PAD, others))
                .append(String.format(Locale.ROOT,
                        "<rect x=\"%.1f\" y=\"4\" width=\"%.1f\" height=\"20\" fill=\"#4a4\"/>", PAD + others, job));
        if (c.peakBytes() > 0) {
            double px = PAD + others + Math.min(cap, c.peakBytes()) / cap * (W - PAD);
            b.append(String.format(Locale.ROOT,
                    "<line x1=\"%.1f\" y1=\"0\" x2=\"%.1f\" y2=\"28\" stroke=\"#000\" stroke-width=\"2\"/>",
                    Math.min(px, W - 1.0), Math.min(px, W - 1.0)));
        }
        b.append("</svg><p class=\"").append(c.neverFull() || c.bytesPerGeneration() == 0 ? "" : "bad").append("\">")
                .append(esc(c.line())).append("</p>");
    }

    private static void table(StringBuilder b, List<GenerationView> gens) {
        b.append("<table><tr><th>generation</th><th>state</th><th>ranks captured/staged</th><th title=\"ranks whose"
                + " images also sit in a partner node cache\">partner copies</th><th>raw</th><th>stored</th>").append(
                "<th>stall s</th><th>local MB/s</th><th>established s</th><th>forecast s</th><th>problem</th></tr>");
        for (int i = gens.size() - 1; i >= Math.max(0, gens.size() - 10); i--) {
            GenerationView g = gens.get(i);
            b.append(String.format(Locale.ROOT,
                    "<tr><td>%d</td><td>%s</td><td>%d/%d</td><td>%s</td><td>%s</td><td>%s</td><td>%.3f</td>"
                            + "<td>%s</td><td>%s</td><td>%s</td><td class=\"bad\">%s</td></tr>",
                    g.generation(), g.state(), g.capturedRanks(), g.stagedRanks(),
                    g.partnerRanks() == 0 ? "" : g.partnerRanks() + " (" + Sizes.format(g.partnerBytes()) + ")",
                    Sizes.format(g.rawBytes()), Sizes.format(g.storedBytes()),
                    g.maxStallSeconds(),
                    g.maxStallSeconds() > 0
                            ? String.format(Locale.ROOT, "%.0f", g.rawBytes() / 1e6 / g.maxStallSeconds()) : "",
                    Double.isNaN(g.secondsToEstablished()) ? ""
                            : String.format(Locale.ROOT, "%.2f", g.secondsToEstablished()),
                    g.currentPrediction().map(p -> String.format(Locale.ROOT, "%.2f", p.predictedSecondsToEstablished())
                            + (p.readShare() > 0 ? String.format(Locale.ROOT, " (at %.0f%% read)", 100 * p.readShare())
                                    : ""))
                            .orElse(""),
                    esc(g.problem())));
        }
        b.append("</table>");
    }
}
