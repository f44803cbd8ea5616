package io.ferry.coordinator.predict;

import java.util.function.ToDoubleFunction;

/**
 * The third term of {@link Predictor}'s fits on several nodes: the bytes the other nodes still had to read for
 * staging when the last rank was captured (the load the last node's push shares the store and the cores with),
 * and when it counts.
 */
final class OthersLoad {
    private OthersLoad() {}

    /** Snapshots of a fit's window that must have had another node's load for the load's term to count. */
    static final int LOADED_POINTS = 2;

    /**
     * The time after capture (or after a mark) for {@code x} (bytes written, ranks, bytes the other nodes had
     * left to read at the capture), fitted on {@code xs}: with the third term where it counts as a load, else
     * without. Several nodes' pushes share the store (and, nodes sharing a machine, its cores), so a node that
     * begins its push while the others still read takes longer: on the multi-node accuracy jobs the rest after
     * capture went from 0.3 s to 1.0 s with the others' bytes left, all else equal, and the forecasts at capture
     * of a run missed by up to 58% without the term. It counts where at least {@link #LOADED_POINTS} snapshots of the window had such
     * a load, and two more in all (with fewer, a fit passes through the loaded ones exactly: two forecasts of
     * one recorded run missed by +40% and -24% so); and a fit in which more bytes left make the rest shorter has
     * read noise into the term: it is dropped there, and where the load is the bytes' own ({@link
     * #followsBytes}). A load larger than any of the window's is taken as the
     * largest it saw: the term is a straight line through a few loaded snapshots, often early ones that were slow
     * for other reasons too, and carried past them it ran away (a recorded run's snapshot that wrote nothing,
     * with 200 MiB left on the others where the window had seen 96 MiB at most, forecast +47%; +14% so).
     * On one node the term is 0 for every snapshot, and the fit leaves it out as it leaves out any term that
     * does not vary.
     */
    static double fitted(double[][] xs, double[] rest, double[] w, double[] x) {
        int loaded = 0;
        double most = 0;
        for (double[] p : xs) {
            loaded += p[2] > 0 ? 1 : 0;
            most = Math.max(most, p[2]);
        }
        if (loaded >= LOADED_POINTS && xs.length >= LOADED_POINTS + 2 && !followsBytes(xs, w)) {
            ToDoubleFunction<double[]> withLoad = LeastSquares.fit(xs, rest, w);
            double[] seen = x.clone();
            seen[2] = Math.min(x[2], most);
            double[] more = seen.clone();
            more[2] += 1 << 30;
            double atSeen = withLoad.applyAsDouble(seen);
            if (withLoad.applyAsDouble(more) >= atSeen) {
                return atSeen;
            }
        }
        return LeastSquares.fit(two(xs), rest, w).applyAsDouble(new double[]{x[0], x[1]});
    }

    /**
     * The share of the load's weighted spread over a window that its bytes written and ranks may explain, above
     * which the load is taken as theirs ({@link #followsBytes}).
     */
    static final double LOAD_EXPLAINED = 0.9;

    /**
     * Whether the others' load over a fit's snapshots ({@code xs[i][2]}, weights {@code w}) is, but for
     * {@code 1 - }{@link #LOAD_EXPLAINED} of its spread, a line in their bytes written and ranks: then the fit cannot
     * tell the load's part from the bytes', and its term is a slope through the little that is left. On the
     * multi-node swing job every snapshot that wrote nothing had 228 to 232 MiB left on the other nodes at its
     * capture and every one that wrote 288 MiB had none; a snapshot that wrote nothing with 96 MiB left was
     * forecast 6 s shorter than nothing after its capture by that slope (-46% in all, a recorded run of
     * 2026-11-30), where the fit without the term says 0.9 s (it took 0.76 s).
     */
    static boolean followsBytes(double[][] xs, double[] w) {
        double[] load = new double[xs.length];
        double total = 0;
        double mean = 0;
        for (int i = 0; i < xs.length; i++) {
            load[i] = xs[i][2];
            total += w[i];
            mean += w[i] * load[i];
        }
        mean /= total;
        ToDoubleFunction<double[]> byBytes = LeastSquares.fit(two(xs), load, w);
        double spread = 0;
        double left = 0;
        for (int i = 0; i < xs.length; i++) {
            spread += w[i] * (load[i] - mean) * (load[i] - mean);
            double off = load[i] - byBytes.applyAsDouble(new double[]{xs[i][0], xs[i][1]});
            left += w[i] * off * off;
        }
        return spread > 0 && left < (1 - LOAD_EXPLAINED) * spread;
    }

    /** The first two terms of each row (bytes written, ranks). */
    private static double[][] two(double[][] xs) {
        double[][] two = new double[xs.length][];
        for (int i = 0; i < xs.length; i++) {
            two[i] = new double[]{xs[i][0], xs[i][1]};
        }
        return two;
    }
}
