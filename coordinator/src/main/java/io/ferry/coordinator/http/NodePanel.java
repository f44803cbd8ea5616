package io.ferry.coordinator.http;

import io.ferry.coordinator.GenerationView;
import io.ferry.coordinator.JobView;
import io.ferry.model.Event;
import io.ferry.model.Sizes;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import static io.ferry.coordinator.http.Svg.esc;

/**
 * The dashboard's views of a job's nodes that stay readable at a thousand nodes: one small
 * square per node coloured by how full its cache's file system is (outlined red while its store
 * circuit is open), the staging bandwidth of every node per generation as a band (slowest to
 * fastest node, the median as a line), and the nodes that were slowest most often. Renders
 * from the folded state; holds nothing.
 */
final class NodePanel {
    /** Squares per row of the node map. */
    static final int PER_ROW = 64;
    static final int CELL = 12;

    private NodePanel() {}

    /** The map of node caches: a square per node, green (empty) to red (full). */
    static void cacheMap(StringBuilder b, JobView v) {
        List<Event.CacheReported> caches = new ArrayList<>(v.caches());
        if (caches.isEmpty()) {
            return;
        }
        caches.sort((x, y) -> x.node().compareTo(y.node()));
        Map<String, Boolean> down = new HashMap<>();
        v.storeHealth().forEach(h -> down.merge(h.node(), "OPEN".equals(h.circuit()), Boolean::logicalOr));
        int rows = (caches.size() + PER_ROW - 1) / PER_ROW;
        long full = caches.stream().filter(c -> fill(c) >= 0.9).count();
        b.append("<b>Node caches</b> <span class=\"muted\">").append(caches.size()).append(" nodes; a square each,")
                .append(" green empty to red full; red outline: store down")
                .append(full > 0 ? "; " + full + " over 90% full" : "").append("</span>");
        b.append(String.format(Locale.ROOT, "<svg class=\"nodes\" width=\"%d\" height=\"%d\">",
                PER_ROW * (CELL + 2) + 2, rows * (CELL + 2) + 2));
        for (int i = 0; i < caches.size(); i++) {
            Event.CacheReported c = caches.get(i);
            double f = fill(c);
            boolean storeDown = down.getOrDefault(c.node(), false);
            b.append(String.format(Locale.ROOT,
                    "<rect class=\"node\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"%s>",
                    1 + (i % PER_ROW) * (CELL + 2), 1 + (i / PER_ROW) * (CELL + 2), CELL, CELL, heat(f),
                    storeDown ? " stroke=\"#c00\" stroke-width=\"2\"" : ""));
            b.append("<title>")
                    .append(esc(String.format(Locale.ROOT, "%s: %.0f%% full, this job %s in %d generations, %s free%s",
                    c.node(), 100 * f, Sizes.format(c.jobBytes()), c.generations(), Sizes.format(c.freeBytes()),
                    storeDown ? "; store down" : ""))).append("</title></rect>");
        }
        b.append("</svg>");
    }

    /** Used share of the cache's file system, 0..1. */
    static double fill(Event.CacheReported c) {
        return c.capacityBytes() <= 0 ? 0 : Math.min(1, Math.max(0, 1 - (double) c.freeBytes() / c.capacityBytes()));
    }

    /** Green at 0, yellow at 0.5, red at 1. */
    static String heat(double f) {
        int r = (int) Math.round(255 * Math.min(1, 2 * f));
        int g = (int) Math.round(200 * Math.min(1, 2 * (1 - f)));
        return String.format(Locale.ROOT, "#%02x%02x40", r, g);
    }

    /**
     * Staging bandwidth per node over the shown generations: the band from the slowest to the
     * fastest node, the median as a line; then the nodes slowest most often.
     */
    static void bandwidth(StringBuilder b, List<GenerationView> gens) {
        List<double[]> spread = new ArrayList<>(); // per generation: min, median, max MB/s
        Map<String, Integer> slowest = new HashMap<>();
        List<Long> shown = new ArrayList<>();
        for (GenerationView g : gens) {
            List<String> nodes = new ArrayList<>();
            List<Double> rates = new ArrayList<>();
            for (String n : g.nodes()) {
                double s = g.stagingSecondsOn(n);
                if (s > 0) {
                    nodes.add(n);
                    rates.add(g.bytesOn(n) / 1e6 / s);
                }
            }
            if (rates.isEmpty()) {
                continue;
            }
            double[] r = rates.stream().mapToDouble(Double::doubleValue).toArray();
            int worst = 0;
            for (int i = 1; i < r.length; i++) {
                worst = r[i] < r[worst] ? i : worst;
            }
            if (r.length > 1) {
                slowest.merge(nodes.get(worst), 1, Integer::sum);
            }
            double[] sorted = r.clone();
            Arrays.sort(sorted);
            spread.add(new double[]{sorted[0], sorted[sorted.length / 2], sorted[sorted.length - 1]});
            shown.add(g.generation());
        }
        if (spread.isEmpty()) {
            return;
        }
        b.append("<b>Staging bandwidth per node</b> <span class=\"muted\">band: slowest to fastest node;")
                .append(" line: median node (MB/s of raw bytes staged)</span>");
        double max = spread.stream().mapToDouble(x -> x[2]).max().orElse(1);
        Svg.start(b, max, "MB/s");
        double slot = (double) (Svg.W - Svg.PAD) / spread.size();
        StringBuilder top = new StringBuilder();
        StringBuilder bottom = new StringBuilder();
        StringBuilder median = new StringBuilder();
        for (int i = 0; i < spread.size(); i++) {
            double x = Svg.PAD + (i + 0.5) * slot;
            top.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, Svg.y(spread.get(i)[2], max)));
            bottom.insert(0, String.format(Locale.ROOT, "%.1f,%.1f ", x, Svg.y(spread.get(i)[0], max)));
            median.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, Svg.y(spread.get(i)[1], max)));
        }
        b.append("<polygon class=\"band\" points=\"").append(top).append(bottom).append("\" fill=\"#9cc3e6\"/>")
                .append("<polyline class=\"median\" points=\"").append(median)
                .append("\" fill=\"none\" stroke=\"#1f5f99\" stroke-width=\"2\"/>");
        for (int i = 0; i < spread.size(); i++) {
            Svg.label(b, Svg.PAD + i * slot, slot, shown.get(i), shown.size());
        }
        b.append("</svg>");
        if (!slowest.isEmpty()) {
            List<Map.Entry<String, Integer>> worst = new ArrayList<>(slowest.entrySet());
            worst.sort((x, y) -> y.getValue() != x.getValue().intValue() ? y.getValue() - x.getValue()
                    : x.getKey().compareTo(y.getKey()));
            b.append("<p class=\"muted\">slowest node most often: ");
            for (int i = 0; i < Math.min(5, worst.size()); i++) {
                b.append(i > 0 ? ", " : "").append("<span class=\"slow\">").append(esc(worst.get(i).getKey()))
                        .append("</span> (")
                        .append(worst.get(i).getValue()).append(" of ").append(spread.size()).append(')');
            }
            b.append("</p>");
        }
    }
}
