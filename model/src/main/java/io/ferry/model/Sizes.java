package io.ferry.model;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parsing and printing of byte sizes: {@code 4096}, {@code 4K}, {@code 4KiB} (binary), {@code 4KB}
 * (decimal), up to exabytes ({@code EB}, {@code EiB}) and the largest a long holds (~9.2 EB).
 */
public final class Sizes {
    private static final Pattern SIZE = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*([KMGTPE]?)(I?B?)",
            Pattern.CASE_INSENSITIVE);

    private Sizes() {}

    /**
     * Parses a size. A bare suffix ({@code K}, {@code M}) and {@code KiB}/{@code MiB} are binary;
     * {@code KB}/{@code MB} are decimal, as storage vendors write them.
     */
    public static long parse(String text) {
        Matcher m = SIZE.matcher(text == null ? "" : text.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException("invalid size '" + text + "': use e.g. 4096, 4M, 4MiB or 4MB");
        }
        String unit = m.group(2).toUpperCase(Locale.ROOT);
        String tail = m.group(3).toUpperCase(Locale.ROOT);
        boolean decimal = tail.equals("B") && !unit.isEmpty();
        int power = unit.isEmpty() ? 0 : "KMGTPE".indexOf(unit) + 1;
        double base = decimal ? 1000 : 1024;
        double v = Double.parseDouble(m.group(1)) * Math.pow(base, power);
        if (v >= 0x1p63) {
            throw new IllegalArgumentException("size '" + text + "' is too large: at most 9.2 EB (8 EiB)");
        }
        return (long) v;
    }

    /** Binary units with one decimal: {@code 1.5 GiB}. */
    public static String format(long bytes) {
        if (bytes < 1024) {
            return bytes + " B";
        }
        int exp = Math.min(6, (int) (Math.log(bytes) / Math.log(1024)));
        return String.format(Locale.ROOT, "%.1f %siB", bytes / Math.pow(1024, exp), "KMGTPE".charAt(exp - 1));
    }
}
