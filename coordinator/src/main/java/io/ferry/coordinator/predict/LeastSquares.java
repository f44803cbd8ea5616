package io.ferry.coordinator.predict;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * Least squares with an intercept, for the handful of points a job's history gives, ordinary or
 * weighted per point. A feature that does not vary across the points (relative spread under 1%)
 * is left out, and so is any feature beyond what the number of points can determine, so the fit
 * never divides by a noise-sized determinant. With every feature left out, the fit is the
 * (weighted) mean of the targets.
 */
final class LeastSquares {
    private LeastSquares() {}

    /** A linear model {@code y = w0 + sum(w_i x_i)} fitted to rows {@code x} and targets {@code y}. */
    static ToDoubleFunction<double[]> fit(double[][] x, double[] y) {
        double[] ones = new double[y.length];
        Arrays.fill(ones, 1);
        return fit(x, y, ones);
    }

    /** As {@link #fit(double[][], double[])}, each point counting with its weight ({@code > 0}). */
    static ToDoubleFunction<double[]> fit(double[][] x, double[] y, double[] weight) {
        int n = y.length;
        double total = 0;
        for (double v : weight) {
            if (!(v > 0)) {
                throw new IllegalArgumentException("weights must be positive, got " + v);
            }
            total += v;
        }
        int k = x[0].length;
        List<Integer> used = new ArrayList<>();
        double[] mean = new double[k];
        double[] scale = new double[k];
        for (int f = 0; f < k; f++) {
            double min = Double.MAX_VALUE;
            double max = -Double.MAX_VALUE;
            double sum = 0;
            for (int r = 0; r < n; r++) {
                min = Math.min(min, x[r][f]);
                max = Math.max(max, x[r][f]);
                sum += weight[r] * x[r][f];
            }
            mean[f] = sum / total;
            scale[f] = max - min;
            if (scale[f] > 0.01 * Math.max(Math.abs(max), Math.abs(min)) && used.size() + 2 <= n) {
                used.add(f);
            }
        }
        double yMean = 0;
        for (int r = 0; r < n; r++) {
            yMean += weight[r] * y[r];
        }
        yMean /= total;
        int m = used.size();
        double[] w = new double[m];
        if (m > 0) {
            // Normal equations on centred, scaled features: (Z^T W Z) w = Z^T W (y - mean y).
            double[][] a = new double[m][m + 1];
            for (int r = 0; r < n; r++) {
                double[] z = new double[m];
                for (int i = 0; i < m; i++) {
                    int f = used.get(i);
                    z[i] = (x[r][f] - mean[f]) / scale[f];
                }
                for (int i = 0; i < m; i++) {
                    for (int j = 0; j < m; j++) {
                        a[i][j] += weight[r] * z[i] * z[j];
                    }
                    a[i][m] += weight[r] * z[i] * (y[r] - yMean);
                }
            }
            for (int i = 0; i < m; i++) {
                a[i][i] += 1e-9; // keeps a near-collinear pair solvable
            }
            w = solve(a);
        }
        double[] weights = w;
        double intercept = yMean;
        return row -> {
            double v = intercept;
            for (int i = 0; i < m; i++) {
                int f = used.get(i);
                v += weights[i] * (row[f] - mean[f]) / scale[f];
            }
            return v;
        };
    }

    /** Gaussian elimination with partial pivoting on an augmented matrix. */
    private static double[] solve(double[][] a) {
        int m = a.length;
        for (int c = 0; c < m; c++) {
            int p = c;
            for (int r = c + 1; r < m; r++) {
                if (Math.abs(a[r][c]) > Math.abs(a[p][c])) {
                    p = r;
                }
            }
            double[] t = a[c];
            a[c] = a[p];
            a[p] = t;
            for (int r = c + 1; r < m; r++) {
                double f = a[r][c] / a[c][c];
                for (int j = c; j <= m; j++) {
                    a[r][j] -= f * a[c][j];
                }
            }
        }
        double[] w = new double[m];
        for (int r = m - 1; r >= 0; r--) {
            double v = a[r][m];
            for (int j = r + 1; j < m; j++) {
                v -= a[r][j] * w[j];
            }
            w[r] = v / a[r][r];
        }
        return w;
    }
}
