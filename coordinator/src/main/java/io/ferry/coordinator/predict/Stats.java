package io.ferry.coordinator.predict;

import java.util.Arrays;

/** The one median the forecasts use (public for {@link io.ferry.coordinator.GenerationView}). */
public final class Stats {
    private Stats() {}

    /** The median of the finite values, the mean of the middle two for an even count; NaN for none. */
    static double median(double[] xs) {
        double[] a = Arrays.stream(xs).filter(Double::isFinite).sorted().toArray();
        if (a.length == 0) {
            return Double.NaN;
        }
        return a.length % 2 == 1 ? a[a.length / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2;
    }

    /** The slowest rank's stall over the median rank's (1 for a single rank or no stall). */
    public static double stragglerSpread(double[] stalls) {
        double median = median(stalls);
        double max = Arrays.stream(stalls).max().orElse(0);
        return stalls.length >= 2 && median > 0 ? max / median : 1;
    }
}
