package io.ferry.coordinator.http;

import java.util.Locale;

/** The dashboard's chart pieces: a frame with its scale, bars, ticks and generation labels, all inline SVG. */
final class Svg {
    static final int W = 720;
    static final int H = 180;
    static final int PAD = 40;

    private Svg() {}

    /** Opens a chart whose top is {@code max} {@code unit}; the caller closes it with {@code </svg>}. */
    static void start(StringBuilder b, double max, String unit) {
        b.append(String.format(Locale.ROOT, "<svg width=\"%d\" height=\"%d\" role=\"img\">", W, H + 16))
                .append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>",
                        PAD, H, W, H))
                .append(String.format(Locale.ROOT, "<text x=\"0\" y=\"12\" font-size=\"11\">%.3g %s</text>", max, unit))
                .append(String.format(Locale.ROOT, "<text x=\"0\" y=\"%d\" font-size=\"11\">0</text>", H));
    }

    /** The y coordinate of {@code value} in a chart whose top is {@code max}. */
    static double y(double value, double max) {
        return max > 0 ? H - finite(value) / max * (H - 10) : H;
    }

    static void bar(StringBuilder b, double x, double slot, double value, double max, String color, String title) {
        double h = H - y(value, max);
        b.append(String.format(Locale.ROOT,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>%s</title></rect>",
                x + slot * 0.15, H - h, slot * 0.7, h, color, esc(title)));
    }

    static void tick(StringBuilder b, double x, double slot, double value, double max, String color, String extra) {
        if (!(max > 0) || !Double.isFinite(value)) {
            return;
        }
        double y = y(value, max);
        b.append(String.format(Locale.ROOT,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s/>",
                x, y, x + slot, y, color, extra));
    }

    /** A generation's number under its slot, for about ten of the {@code count} slots. */
    static void label(StringBuilder b, double x, double slot, long generation, int count) {
        int every = Math.max(1, count / 10);
        if (generation % every == 0) {
            b.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" font-size=\"10\">%d</text>", x + slot * 0.2,
                    H + 13, generation));
        }
    }

    static double finite(double v) {
        return Double.isFinite(v) ? v : 0;
    }

    static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
