package io.ferry.coordinator.predict;

import io.ferry.coordinator.GenerationView;
import io.ferry.coordinator.JobView;

import java.util.ArrayList;
import java.util.List;
import java.util.function.ToDoubleFunction;
import java.util.stream.IntStream;

/**
 * What Ferry measured on a real job, per tier, to scale to a machine that does not exist yet
 * ({@link Projection}). Taken from the job's last {@link Predictor#WINDOW} established snapshots,
 * leaving the first {@link Predictor#WARM_UP} out when at least two others remain:
 *
 * @param job                  the job measured
 * @param snapshots            established snapshots used
 * @param localBytesPerSecond  per node, writing images into the node-local cache: the slope of
 *                             {@code stall = stallFixedSeconds + nodeBytes / rate} (least squares)
 * @param stallFixedSeconds    the stall's fixed part (quiesce handshake, fsync, rename)
 * @param stagingBytesPerSecond per node: raw bytes over the seconds its agent spent hashing,
 *                             compressing and putting them (median)
 * @param compressionRatio     raw over stored bytes (median)
 * @param stragglerSpread      the slowest rank's stall over the median rank's (median)
 * @param fixedSeconds         what remains of the time to established beyond stall and staging:
 *                             request, commit marker, event round trips (median, at least 0)
 * @param store                the store's aggregate bandwidth against concurrent writers, probed
 *                             (empty when not probed)
 * @param rawDiskBytesPerSecond a plain fsynced sequential write into the store's file system, the
 *                             hardware's rate that the law assumes; NaN when the store is not a
 *                             file system here (HDFS, S3)
 */
public record Calibration(String job, int snapshots, double localBytesPerSecond, double stallFixedSeconds,
                          double stagingBytesPerSecond, double compressionRatio, double stragglerSpread,
                          double fixedSeconds, StoreCurve store, double rawDiskBytesPerSecond) {

    public Calibration {
        if (snapshots < 1 || !(localBytesPerSecond > 0) || !(stagingBytesPerSecond > 0) || !(compressionRatio > 0)
                || !(stragglerSpread >= 1) || !(stallFixedSeconds >= 0) || !(fixedSeconds >= 0) || store == null) {
            throw new IllegalArgumentException("calibration needs snapshots >= 1, rates and ratio above zero, "
                    + "spread >= 1 and fixed times >= 0");
        }
    }

    /**
     * Measures {@code v}'s established snapshots; the store curve and raw disk rate come from a
     * probe and are added with {@link #withStore}.
     *
     * @throws IllegalArgumentException when the job has too few established snapshots
     */
    public static Calibration measure(JobView v) {
        List<GenerationView> used = new ArrayList<>();
        for (GenerationView g : v.generations()) {
            if (g.state() == GenerationView.State.ESTABLISHED && g.rawBytes() > 0 && g.storedBytes() > 0
                    && g.maxStallSeconds() > 0 && !Double.isNaN(g.secondsToEstablished())) {
                used.add(g);
            }
        }
        if (used.size() < 2) {
            throw new IllegalArgumentException("job " + v.job() + " has " + used.size()
                    + " established snapshots with sizes;"
                    + " a calibration needs at least 2 (and leaves the first " + Predictor.WARM_UP + " out when "
                    + (Predictor.WARM_UP + 2) + " or more are there)");
        }
        // The first snapshots warm caches and compilers: left out when enough remain.
        int from = used.size() >= Predictor.WARM_UP + 2 ? Predictor.WARM_UP : 0;
        used = used.subList(Math.max(from, used.size() - Predictor.WINDOW), used.size());
        int n = used.size();
        double[][] x = new double[n][];
        double[] stall = new double[n];
        double[] staging = new double[n];
        double[] ratio = new double[n];
        double[] spread = new double[n];
        double[] rest = new double[n];
        for (int i = 0; i < n; i++) {
            GenerationView g = used.get(i);
            long nodeBytes = 0;
            double nodeStaging = 0;
            for (String node : g.nodes()) { // the busiest node sets the pace
                if (g.bytesOn(node) > nodeBytes) {
                    nodeBytes = g.bytesOn(node);
                    nodeStaging = g.stagingSecondsOn(node);
                }
            }
            x[i] = new double[]{nodeBytes};
            stall[i] = g.maxStallSeconds();
            staging[i] = nodeStaging > 0 ? nodeBytes / nodeStaging : Double.NaN;
            ratio[i] = (double) g.rawBytes() / g.storedBytes();
            spread[i] = g.stragglerSpread();
            rest[i] = g.secondsToEstablished() - g.maxStallSeconds() - nodeStaging;
        }
        ToDoubleFunction<double[]> fit = LeastSquares.fit(x, stall);
        double fixed = fit.applyAsDouble(new double[]{0});
        double perByte = fit.applyAsDouble(new double[]{1e9}) / 1e9 - fixed / 1e9;
        double localRate;
        if (perByte > 0) {
            localRate = 1 / perByte;
        } else { // every snapshot the same size: the slope cannot be separated from the fixed part
            fixed = 0;
            localRate = Stats.median(IntStream.range(0, n).mapToDouble(i -> x[i][0] / stall[i]).toArray());
        }
        return new Calibration(v.job(), n, localRate, Math.max(0, fixed), Stats.median(staging), Stats.median(ratio),
                Math.max(1, Stats.median(spread)), Math.max(0, Stats.median(rest)), StoreCurve.NONE, Double.NaN);
    }

    /** This calibration with a probed store curve and the raw rate of the store's disk (NaN: unknown). */
    public Calibration withStore(StoreCurve curve, double rawDisk) {
        return new Calibration(job, snapshots, localBytesPerSecond, stallFixedSeconds, stagingBytesPerSecond,
                compressionRatio, stragglerSpread, fixedSeconds, curve, rawDisk);
    }

    /**
     * The fraction of its hardware's rate the store reached at saturation ({@code store max /
     * raw disk}), or NaN when the store's hardware rate is unknown here.
     */
    public double storeEfficiency() {
        return store.points().isEmpty() || !(rawDiskBytesPerSecond > 0) ? Double.NaN
                : Math.min(1, store.maxBytesPerSecond() / rawDiskBytesPerSecond);
    }
}
