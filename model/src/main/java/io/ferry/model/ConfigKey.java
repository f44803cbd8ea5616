package io.ferry.model;

import java.time.Duration;
import java.util.function.Function;

/**
 * One declared configuration key: name, documentation, default and a parser that validates.
 * Declared once per module in a table; see {@link ConfigTable}.
 */
public record ConfigKey<T>(String name, String doc, String defaultValue, Function<String, T> parser) {
    public T parse(String text) {
        try {
            return parser.apply(text.trim());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("configuration key '" + name + "': invalid value '" + text + "': "
                    + e.getMessage(), e);
        }
    }

    public static ConfigKey<Integer> intKey(String name, String doc, int dflt, int min, int max) {
        return new ConfigKey<>(name, doc, Integer.toString(dflt), s -> inRange(Integer.parseInt(s), min, max));
    }

    /** A whole number of things (events, records): digits only, no units, within {@code min..max}. */
    public static ConfigKey<Long> countKey(String name, String doc, long dflt, long min, long max) {
        return new ConfigKey<>(name, doc, Long.toString(dflt), s -> {
            long v;
            try {
                v = Long.parseLong(s);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not a whole number");
            }
            return inRange(v, min, max);
        });
    }

    public static ConfigKey<Long> sizeKey(String name, String doc, String dflt, long min, long max) {
        return new ConfigKey<>(name, doc, dflt, s -> inRange(Sizes.parse(s), min, max));
    }

    public static ConfigKey<Duration> durationKey(String name, String doc, String dflt,
                                                            Duration min, Duration max) {
        return new ConfigKey<>(name, doc, dflt, s -> inRange(Durations.parse(s), min, max));
    }

    public static ConfigKey<Double> doubleKey(String name, String doc, double dflt, double min, double max) {
        return new ConfigKey<>(name, doc, Double.toString(dflt), s -> inRange(Double.parseDouble(s), min, max));
    }

    private static <N extends Comparable<N>> N inRange(N v, N min, N max) {
        if (v.compareTo(min) < 0 || v.compareTo(max) > 0) {
            throw new IllegalArgumentException("must be within " + min + ".." + max);
        }
        return v;
    }
}
