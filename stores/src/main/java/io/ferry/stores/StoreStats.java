package io.ferry.stores;

/**
 * What went through a {@link CountingStore} since it was opened: objects and bytes written
 * (each put that succeeded, once however many tries it took) and read.
 *
 * @param objectsWritten puts that succeeded
 * @param bytesWritten   bytes of those puts, as stored (after compression)
 * @param objectsRead    reads that succeeded (whole objects and ranges)
 * @param bytesRead      bytes those reads returned
 */
public record StoreStats(long objectsWritten, long bytesWritten, long objectsRead, long bytesRead) {
    public static final StoreStats NONE = new StoreStats(0, 0, 0, 0);

    public StoreStats {
        if (objectsWritten < 0 || bytesWritten < 0 || objectsRead < 0 || bytesRead < 0) {
            throw new IllegalArgumentException("store counts must be >= 0");
        }
    }
}
