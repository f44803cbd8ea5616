package io.ferry.staging;

import io.ferry.model.Manifest;
import io.ferry.staging.packs.PackFormat;

/**
 * The most bytes Ferry reads of each kind of store object ({@link io.ferry.stores.Store#getAtMost}):
 * an object over its limit is damaged or not Ferry's, and is refused with its size before a
 * buffer of that size is allocated. Each limit is far above what Ferry writes.
 */
public final class ReadLimits {
    /**
     * A rank's manifest: version 3 spends about 160 bytes per blob, so 1 GiB is some 6.7 million
     * blobs, a rank image of about 400 GiB at the default 64 KiB blobs.
     */
    public static final int MANIFEST = 1 << 30;
    /** A commit marker, its head or one shard (a shard names at most 1,024 ranks' digests: ~100 KiB). */
    public static final int MARKER = 16 << 20;
    /** A chunk object: at most one chunk, stored raw, and its header. */
    public static final int CHUNK = (int) Manifest.MAX_CHUNK_SIZE + 64 * 1024;
    /** A pack, records and trailer. */
    public static final int PACK = PackFormat.MAX_PACK;
    /** A pack's moves object (one entry per live record repacked out of one pack). */
    public static final int MOVES = 64 << 20;
    /** gc's record of its first step. */
    public static final int GC_RECORD = 1 << 20;

    private ReadLimits() {}
}
