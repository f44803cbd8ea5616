package io.ferry.coordinator.predict;

/**
 * The Checkpoint Fill-Time Law of Cao et al. ("System-level Scalable Checkpoint-Restart for
 * Petascale Computing"): the ideal time to write a checkpoint is
 * {@code (checkpoint size / total storage capacity) x single-disk fill time}, where the
 * single-disk fill time is {@code disk size / disk write bandwidth}. With every disk writing at
 * full speed in parallel, the checkpoint fills the same fraction of each disk. For a
 * full-memory dump the checkpoint size is the machine's RAM. It holds for SSDs as for disks.
 *
 * @param checkpointBytes        bytes to write (for a full-memory dump: the machine's RAM)
 * @param storageBytes           total capacity of the storage that receives it
 * @param diskBytes              capacity of one disk (or SSD) of that storage
 * @param diskBytesPerSecond     write bandwidth of one disk
 */
public record FillTimeLaw(long checkpointBytes, long storageBytes, long diskBytes, double diskBytesPerSecond) {
    public FillTimeLaw {
        if (checkpointBytes <= 0 || storageBytes <= 0 || diskBytes <= 0 || !(diskBytesPerSecond > 0)) {
            throw new IllegalArgumentException(
                    "checkpoint size, storage, disk size and disk bandwidth must all be above zero");
        }
        if (diskBytes > storageBytes) {
            throw new IllegalArgumentException("one disk (" + diskBytes
                    + " bytes) cannot hold more than the whole storage (" + storageBytes + " bytes)");
        }
    }

    /** Checkpoint size over storage capacity: the fraction of every disk the checkpoint fills. */
    public double ratio() {
        return (double) checkpointBytes / storageBytes;
    }

    /** Seconds one disk takes to fill at its write bandwidth. */
    public double singleDiskFillSeconds() {
        return diskBytes / diskBytesPerSecond;
    }

    /** The law's checkpoint time: no machine does better with this storage. */
    public double idealSeconds() {
        return ratio() * singleDiskFillSeconds();
    }

    /** Disks in the storage (capacity over one disk's). */
    public double disks() {
        return (double) storageBytes / diskBytes;
    }
}
