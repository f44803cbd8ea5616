package io.ferry.coordinator.predict;

import java.util.Optional;

/**
 * A {@link Calibration} scaled to a target machine, per tier, beside the Checkpoint Fill-Time
 * Law's ideal for the same machine.
 *
 * <p><b>Application stall (local SSD).</b> Ideal: the node's bytes over its SSD's bandwidth (the
 * law with the node's SSD as the whole storage). Calibrated: {@code stallFixed + nodeBytes /
 * localRate x spread}, where {@code localRate} is the rate measured here, or, with a target SSD
 * bandwidth, that bandwidth times the fraction of this machine's raw disk rate the capture
 * reached (the whole target bandwidth when the raw rate is unknown).
 *
 * <p><b>Established on the remote store.</b> Ideal: the law with the target's storage. Calibrated:
 * {@code fixed + stall + max(nodeBytes / stagingRate, nodes x nodeBytes / ratio / B(nodes)) x
 * spread}: every node stages in parallel at the measured per-node rate (hash, compress, put),
 * unless the store, shared by all nodes, is slower. {@code B} is the measured saturation curve
 * with its ceiling moved to the target's hardware: {@code disks x disk bandwidth x efficiency},
 * the efficiency being the fraction of its hardware's rate the store reached here (1 when that
 * is unknown, as for HDFS or S3 measured from a client). Without target storage figures, the
 * measured curve is used as it is (the same store, more writers).
 *
 * @param nodes         target nodes (one agent, one store writer each)
 * @param bytesPerNode  checkpoint bytes per node (for a full-memory dump, its RAM)
 * @param localBytesPerSecond target SSD write bandwidth per node, NaN: as measured here
 * @param law           the target's storage for the law, empty when not given
 */
public record Projection(Calibration calibration, long nodes, long bytesPerNode, double localBytesPerSecond,
                         Optional<FillTimeLaw> law) {
    public Projection {
        if (nodes < 1 || bytesPerNode < 1) {
            throw new IllegalArgumentException("a target needs nodes >= 1 and bytes per node >= 1");
        }
        if (calibration.store().points().isEmpty()) {
            throw new IllegalArgumentException("the calibration has no store measurements");
        }
    }

    public double totalBytes() {
        return (double) nodes * bytesPerNode;
    }

    /** The rate a target node writes images into its cache at. */
    public double localRate() {
        Calibration c = calibration;
        if (!(localBytesPerSecond > 0)) {
            return c.localBytesPerSecond();
        }
        double efficiency = c.rawDiskBytesPerSecond() > 0
                ? Math.min(1, c.localBytesPerSecond() / c.rawDiskBytesPerSecond()) : 1;
        return localBytesPerSecond * efficiency;
    }

    /** The law's stall: the node's bytes over its SSD's bandwidth (as measured raw here when not given). */
    public double idealStallSeconds() {
        double ssd = localBytesPerSecond > 0 ? localBytesPerSecond
                : calibration.rawDiskBytesPerSecond() > 0 ? calibration.rawDiskBytesPerSecond()
                : calibration.localBytesPerSecond();
        return bytesPerNode / ssd;
    }

    public double stallSeconds() {
        return calibration.stallFixedSeconds() + bytesPerNode / localRate() * calibration.stragglerSpread();
    }

    /** The store's aggregate ceiling on the target. */
    public double storeCeiling() {
        if (law.isEmpty()) {
            return calibration.store().maxBytesPerSecond();
        }
        double efficiency = Double.isNaN(calibration.storeEfficiency()) ? 1 : calibration.storeEfficiency();
        return law.get().disks() * law.get().diskBytesPerSecond() * efficiency;
    }

    /** Aggregate bandwidth of all target nodes writing to the store at once. */
    public double storeBytesPerSecond() {
        return StoreCurve.bytesPerSecond(nodes, calibration.store().singleWriterBytesPerSecond(), storeCeiling());
    }

    /** Seconds one node's agent needs to hash, compress and put its images, the store aside. */
    public double stagingSeconds() {
        return bytesPerNode / calibration.stagingBytesPerSecond();
    }

    /** Seconds the shared store needs for every node's compressed images. */
    public double storeSeconds() {
        return totalBytes() / calibration.compressionRatio() / storeBytesPerSecond();
    }

    public double establishedSeconds() {
        return calibration.fixedSeconds() + stallSeconds()
                + Math.max(stagingSeconds(), storeSeconds()) * calibration.stragglerSpread();
    }

    /** The law's time to write the whole checkpoint to the target's storage, NaN without it. */
    public double idealEstablishedSeconds() {
        return law.map(FillTimeLaw::idealSeconds).orElse(Double.NaN);
    }

    /** Which limits the remote tier: "staging" (per-node CPU and client) or "store" (shared bandwidth). */
    public String remoteBottleneck() {
        return stagingSeconds() >= storeSeconds() ? "per-node staging" : "the shared store";
    }
}
