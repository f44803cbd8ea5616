package io.ferry.model;

import java.util.Locale;

/**
 * Parsing of transfer rates: a {@link Sizes size} per second, {@code 4GB/s} (decimal),
 * {@code 500MiB/s} (binary), {@code 1.5 TB/s}; the {@code /s} is required so a rate is never
 * mistaken for a size.
 */
public final class Rates {
    private Rates() {}

    /** Bytes per second. */
    public static double parse(String text) {
        String t = text == null ? "" : text.trim();
        if (!t.toLowerCase(Locale.ROOT).endsWith("/s")) {
            throw new IllegalArgumentException("invalid rate '" + text + "': use e.g. 4GB/s, 500MB/s or 2GiB/s");
        }
        long perSecond;
        try {
            perSecond = Sizes.parse(t.substring(0, t.length() - 2));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("invalid rate '" + text + "': use e.g. 4GB/s, 500MB/s or 2GiB/s", e);
        }
        if (perSecond <= 0) {
            throw new IllegalArgumentException("rate '" + text + "' must be above zero");
        }
        return perSecond;
    }
}
