package io.ferry.coordinator.predict;

import java.util.List;

/**
 * A store's aggregate write bandwidth against the number of concurrent writers, measured, and
 * the saturating curve through it: {@code B(n) = n b1 / (1 + (n - 1) b1 / Bmax)}: one writer
 * gets {@code b1}, many get no more than {@code Bmax} together. Fitted by least squares on
 * {@code 1/B = (1/b1 - 1/Bmax) / n + 1/Bmax}, which is linear in {@code 1/n}.
 *
 * @param points the measurements, in any order
 */
public record StoreCurve(List<Point> points) {
    public static final StoreCurve NONE = new StoreCurve(List.of());

    /** @param writers concurrent writers; @param bytesPerSecond their aggregate rate */
    public record Point(int writers, double bytesPerSecond) {
        public Point {
            if (writers < 1 || !(bytesPerSecond > 0) || !Double.isFinite(bytesPerSecond)) {
                throw new IllegalArgumentException("a store point needs writers >= 1 and a rate above zero");
            }
        }
    }

    public StoreCurve {
        points = List.copyOf(points);
    }

    /** {@code 1/Bmax} and {@code 1/b1 - 1/Bmax}, fitted. */
    private double[] fit() {
        if (points.isEmpty()) {
            throw new IllegalStateException("no store measurements");
        }
        double[][] x = new double[points.size()][];
        double[] y = new double[points.size()];
        for (int i = 0; i < points.size(); i++) {
            x[i] = new double[]{1.0 / points.get(i).writers()};
            y[i] = 1 / points.get(i).bytesPerSecond();
        }
        var f = LeastSquares.fit(x, y);
        double c = f.applyAsDouble(new double[]{0});
        double a = f.applyAsDouble(new double[]{1}) - c;
        double best = points.stream().mapToDouble(Point::bytesPerSecond).max().orElseThrow();
        if (!(a + c > 0)) { // noise made one writer look infinitely fast: fall back to the best seen
            return new double[]{1 / best, 0};
        }
        // A ceiling a million times one writer's rate is no ceiling: rounding, not a measurement.
        return new double[]{c > 1e-6 * (a + c) ? c : 0, a};
    }

    /** Bandwidth of one writer on the fitted curve. */
    public double singleWriterBytesPerSecond() {
        double[] f = fit();
        return 1 / (f[0] + f[1]);
    }

    /** Where the curve saturates (infinite when the measurements show no saturation). */
    public double maxBytesPerSecond() {
        double c = fit()[0];
        return c > 0 ? 1 / c : Double.POSITIVE_INFINITY;
    }

    /** The fitted aggregate bandwidth of {@code writers} concurrent writers. */
    public double bytesPerSecond(int writers) {
        return bytesPerSecond(writers, singleWriterBytesPerSecond(), maxBytesPerSecond());
    }

    /** The same curve shape for a single-writer rate {@code b1} and a ceiling {@code max}. */
    public static double bytesPerSecond(long writers, double b1, double max) {
        return writers * b1 / (1 + (writers - 1) * b1 / max);
    }
}
