package io.ferry.model;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parsing of durations as people type them: {@code 500ms}, {@code 5s}, {@code 2m}, {@code 1h}, or ISO {@code PT5S}. */
public final class Durations {
    private static final Pattern SIMPLE = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s|m|h)");

    private Durations() {}

    /** A duration for people: {@code 90 s}, {@code 42 min}, {@code 5.5 h}, {@code 3.0 days}. */
    public static String human(double seconds) {
        if (seconds < 120) {
            return String.format(Locale.ROOT, "%.0f s", seconds);
        }
        if (seconds < 7200) {
            return String.format(Locale.ROOT, "%.0f min", seconds / 60);
        }
        if (seconds < 172800) {
            return String.format(Locale.ROOT, "%.1f h", seconds / 3600);
        }
        return String.format(Locale.ROOT, "%.1f days", seconds / 86400);
    }

    public static Duration parse(String text) {
        String t = text == null ? "" : text.trim();
        if (t.equals("0")) {
            return Duration.ZERO;
        }
        Matcher m = SIMPLE.matcher(t);
        if (m.matches()) {
            double v = Double.parseDouble(m.group(1));
            double millis = switch (m.group(2)) {
                case "ms" -> v;
                case "s" -> v * 1e3;
                case "m" -> v * 60e3;
                default -> v * 3600e3;
            };
            return Duration.ofMillis((long) millis);
        }
        try {
            return Duration.parse(t);
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("invalid duration '" + text + "': use e.g. 500ms, 5s, 2m or 1h", e);
        }
    }
}
