package io.ferry.coordinator.http;

import io.ferry.coordinator.JobView;
import io.ferry.coordinator.RestartHistory;

import java.text.SimpleDateFormat;
import java.util.Date;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TimeZone;

import static io.ferry.coordinator.http.Svg.esc;

/**
 * The dashboard's restart history: per restart (rollback or resuming launch), a bar split by
 * where the ranks' images came from (local cache, partner node, remote store), how long until
 * the last node restored, and the nodes that could not; and, for the newest restart, a square
 * per node coloured by its source.
 */
final class RestartPanel {
    /** Colours of the tiers, nearest first. */
    static final Map<String, String> COLOURS = Map.of("local", "#4a4", "partner", "#e0b030", "remote", "#3a78c2",
            "mixed", "#a070c0");
    private static final int BAR = 420;

    private RestartPanel() {}

    static void render(StringBuilder b, JobView v) {
        List<RestartHistory.Restart> restarts = v.restarts();
        if (restarts.isEmpty()) {
            return;
        }
        b.append("<b>Restarts</b> <span class=\"muted\">where each rank's image came from:");
        for (String tier : List.of("local", "partner", "remote")) {
            b.append(" <span style=\"color:").append(COLOURS.get(tier)).append("\">&#9632;</span> ").append(tier);
        }
        b.append("</span><table class=\"restarts\"><tr><th>started (UTC)</th><th>generation</th><th>cause</th>")
                .append("<th style=\"text-align:left\">ranks by source</th><th>restored in"
                        + " s</th><th>failed nodes</th></tr>");
        SimpleDateFormat time = new SimpleDateFormat("yyyy-MM-dd HH:mm:ss", Locale.ROOT);
        time.setTimeZone(TimeZone.getTimeZone("UTC"));
        int most = Math.max(1, restarts.stream().mapToInt(RestartHistory.Restart::restoredRanks).max().orElse(1));
        for (int i = restarts.size() - 1; i >= 0; i--) {
            RestartHistory.Restart r = restarts.get(i);
            b.append("<tr><td>").append(time.format(new Date(r.startedAtMillis()))).append("</td><td>")
                    .append(r.generation() < 0 ? "start" : Long.toString(r.generation())).append("</td><td>")
                    .append(esc(r.cause())).append("</td><td style=\"text-align:left\">");
            sources(b, r.ranksBySource(), most);
            b.append("</td><td>").append(Double.isNaN(r.secondsToRestored()) ? ""
                            : String.format(Locale.ROOT, "%.1f", r.secondsToRestored()))
                            .append("</td><td class=\"bad\">");
            if (!r.failedNodes().isEmpty()) {
                Map.Entry<String, String> first = r.failedNodes().entrySet().iterator().next();
                b.append(r.failedNodes().size()).append(": ")
                        .append(esc(first.getKey() + " (" + first.getValue() + ")"))
                        .append(r.failedNodes().size() > 1 ? ", ..." : "");
            }
            b.append("</td></tr>");
        }
        b.append("</table>");
        nodeSources(b, restarts.get(restarts.size() - 1));
    }

    /** A bar of ranks split by tier, scaled to the restart with the most ranks, with the counts after it. */
    private static void sources(StringBuilder b, Map<String, Integer> byTier, int most) {
        b.append(String.format(Locale.ROOT, "<svg class=\"sources\" width=\"%d\" height=\"14\">", BAR + 200));
        double x = 0;
        StringBuilder text = new StringBuilder();
        for (Map.Entry<String, Integer> e : byTier.entrySet()) {
            double w = (double) BAR * e.getValue() / most;
            b.append(String.format(Locale.ROOT,
                    "<rect class=\"tier-%s\" x=\"%.1f\" y=\"1\" width=\"%.1f\" height=\"12\" fill=\"%s\">"
                    + "<title>%d ranks from %s</title></rect>", esc(e.getKey()), x, w,
                    COLOURS.getOrDefault(e.getKey(), "#888"), e.getValue(), esc(e.getKey())));
            x += w;
            text.append(text.length() > 0 ? ", " : "").append(e.getValue()).append(' ').append(esc(e.getKey()));
        }
        b.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"12\" font-size=\"11\">%s</text></svg>", x + 6, text));
    }

    /** The newest restart: a square per node in its source's colour. */
    private static void nodeSources(StringBuilder b, RestartHistory.Restart r) {
        Map<String, String> byNode = r.sourceByNode();
        if (byNode.isEmpty()) {
            return;
        }
        int cell = NodePanel.CELL;
        int perRow = NodePanel.PER_ROW;
        int rows = (byNode.size() + perRow - 1) / perRow;
        b.append("<div class=\"muted\">newest restart, a square per node by its ranks' source</div>")
                .append(String.format(Locale.ROOT, "<svg width=\"%d\" height=\"%d\">", perRow * (cell + 2) + 2,
                        rows * (cell + 2) + 2));
        int i = 0;
        for (Map.Entry<String, String> e : byNode.entrySet()) {
            b.append(String.format(Locale.ROOT,
                    "<rect class=\"source\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\">"
                            + "<title>%s</title></rect>", 1 + (i % perRow) * (cell + 2), 1 + (i / perRow) * (cell + 2),
                            cell, cell,
                    COLOURS.getOrDefault(e.getValue(), "#888"), esc(e.getKey() + ": " + e.getValue())));
            i++;
        }
        b.append("</svg>");
    }
}
