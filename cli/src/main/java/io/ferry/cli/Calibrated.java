package io.ferry.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ferry.coordinator.predict.Calibration;
import io.ferry.coordinator.predict.CalibrationJson;
import io.ferry.coordinator.predict.Predictor;
import io.ferry.coordinator.predict.Projection;
import io.ferry.coordinator.predict.StoreCurve;

import java.io.PrintStream;
import java.util.Locale;

/** {@code ferry plan --calibrate-from JOB | --calibration FILE}: what was measured, and the projection. */
final class Calibrated {
    private Calibrated() {}

    static void printCalibration(Calibration c, String storeUri, PrintStream out) {
        out.printf(Locale.ROOT,
                "Calibration from job %s: %d established snapshots (the first %d are left out as warm-up"
                        + " when %d or more are there)%n", c.job(), c.snapshots(),
                        Predictor.WARM_UP,
                Predictor.WARM_UP + 2);
        out.printf(Locale.ROOT,
                "  local write into the cache    %s/s per node + %.3f s fixed (stall = fixed + node bytes / rate)%n",
                PlanCommand.decimal(c.localBytesPerSecond()), c.stallFixedSeconds());
        if (c.rawDiskBytesPerSecond() > 0) {
            out.printf(Locale.ROOT, "  raw disk (fsynced sequential) %s/s: the capture reaches %.0f%% of it%n",
                    PlanCommand.decimal(c.rawDiskBytesPerSecond()),
                    100 * Math.min(1, c.localBytesPerSecond() / c.rawDiskBytesPerSecond()));
        }
        out.printf(Locale.ROOT, "  staging (hash, compress, put) %s/s per node; compression %.3gx%n",
                PlanCommand.decimal(c.stagingBytesPerSecond()), c.compressionRatio());
        StringBuilder pts = new StringBuilder();
        for (StoreCurve.Point p : c.store().points()) {
            pts.append(pts.length() == 0 ? "" : ", ").append(p.writers())
                    .append(p.writers() == 1 ? " writer " : " writers ")
                    .append(PlanCommand.decimal(p.bytesPerSecond())).append("/s");
        }
        out.printf(Locale.ROOT, "  store %s: %s%n", storeUri == null ? "(from the file)" : storeUri, pts);
        double max = c.store().maxBytesPerSecond();
        out.printf(Locale.ROOT, "    fitted: one writer %s/s, saturates at %s%s%n",
                PlanCommand.decimal(c.store().singleWriterBytesPerSecond()),
                Double.isInfinite(max) ? "no visible ceiling" : PlanCommand.decimal(max) + "/s",
                Double.isNaN(c.storeEfficiency()) ? " (the store's hardware rate is unknown from here)"
                        : String.format(Locale.ROOT, " (%.0f%% of the raw disk)", 100 * c.storeEfficiency()));
        out.printf(Locale.ROOT, "  straggler spread              %.3gx (slowest rank's stall over the median rank's)%n",
                c.stragglerSpread());
        out.printf(Locale.ROOT, "  fixed cost                    %.3f s (request, commit marker, events)%n",
                c.fixedSeconds());
    }

    static void printProjection(Projection p, PrintStream out) {
        out.printf(Locale.ROOT, "Target: %d nodes x %s = %s; node SSD %s; storage %s%n", p.nodes(),
                PlanCommand.decimal(p.bytesPerNode()), PlanCommand.decimal(p.totalBytes()),
                p.localBytesPerSecond() > 0 ? PlanCommand.decimal(p.localBytesPerSecond()) + "/s" : "as measured here",
                p.law().map(l -> String.format(Locale.ROOT, "%s of %s disks at %s/s",
                        PlanCommand.decimal(l.storageBytes()),
                        PlanCommand.decimal(l.diskBytes()), PlanCommand.decimal(l.diskBytesPerSecond())))
                        .orElse("the measured store (no --storage given)"));
        out.println("| tier | fill-time law (ideal) | calibrated | calibrated / ideal |");
        out.println("|---|---:|---:|---:|");
        row(out, "application stall (node-local SSD)", p.idealStallSeconds(), p.stallSeconds());
        row(out, "established on the remote store", p.idealEstablishedSeconds(), p.establishedSeconds());
        out.printf(Locale.ROOT,
                "remote tier limited by %s: staging %s per node, the store %s for %d writers at %s/s together%n",
                p.remoteBottleneck(), PlanCommand.seconds(p.stagingSeconds()), PlanCommand.seconds(p.storeSeconds()),
                p.nodes(), PlanCommand.decimal(p.storeBytesPerSecond()));
        out.println(assumptions(p));
    }

    /**
     * What the calibrated projection takes for granted, said with it: the nodes stage as this one did,
     * the store's curve holds beyond the writers probed, the slowest node decides, the store is Ferry's alone.
     */
    static String assumptions(Projection p) {
        Calibration c = p.calibration();
        int probed = c.store().points().stream().mapToInt(StoreCurve.Point::writers).max().orElse(0);
        double ceiling = p.storeCeiling();
        return String.format(Locale.ROOT, "assumes: each of the %d nodes stages at %s/s as the job measured"
                        + " here did (its CPU hashes and compresses as fast); one store writer per node, the %d"
                        + " together getting %s/s on the curve fitted to %d..%d writers probed%s, with its ceiling %s;"
                        + " the snapshot waits for the slowest node (the %.3gx straggler spread measured); nothing"
                        + " else writes to the store meanwhile",
                p.nodes(), PlanCommand.decimal(c.stagingBytesPerSecond()), p.nodes(),
                PlanCommand.decimal(p.storeBytesPerSecond()), c.store().points().stream()
                        .mapToInt(StoreCurve.Point::writers).min().orElse(0), probed,
                p.nodes() > probed ? " (extrapolated beyond them)" : "",
                Double.isInfinite(ceiling) ? "unseen (no saturation measured)"
                        : p.law().isPresent() ? "at the target's disks (" + PlanCommand.decimal(ceiling) + "/s)"
                        : "as measured (" + PlanCommand.decimal(ceiling) + "/s)",
                c.stragglerSpread());
    }

    private static void row(PrintStream out, String tier, double ideal, double calibrated) {
        out.printf(Locale.ROOT, "| %s | %s | %s | %s |%n", tier,
                Double.isNaN(ideal) ? "n/a (give --storage...)" : PlanCommand.seconds(ideal),
                PlanCommand.seconds(calibrated),
                Double.isNaN(ideal) ? "" : String.format(Locale.ROOT, "%.2fx", calibrated / ideal));
    }

    static ObjectNode json(Calibration c, Projection p) {
        ObjectNode n = new ObjectMapper().createObjectNode();
        n.set("calibration", CalibrationJson.toJson(c));
        if (p != null) {
            n.putObject("target").put("nodes", p.nodes()).put("bytesPerNode", p.bytesPerNode())
                    .put("totalBytes", p.totalBytes()).put("storeBytesPerSecond", p.storeBytesPerSecond())
                    .put("remoteBottleneck", p.remoteBottleneck())
                    .put("assumes", assumptions(p).substring("assumes: ".length()));
            ObjectNode stall = n.putObject("stall").put("calibratedSeconds", p.stallSeconds())
                    .put("idealSeconds", p.idealStallSeconds());
            ObjectNode est = n.putObject("established").put("calibratedSeconds", p.establishedSeconds());
            stall.put("ratio", p.stallSeconds() / p.idealStallSeconds());
            if (!Double.isNaN(p.idealEstablishedSeconds())) {
                est.put("idealSeconds", p.idealEstablishedSeconds())
                        .put("ratio", p.establishedSeconds() / p.idealEstablishedSeconds());
            }
        }
        return n;
    }
}
