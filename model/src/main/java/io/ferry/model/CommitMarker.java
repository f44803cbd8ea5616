package io.ferry.model;

import java.time.Instant;

/**
 * What a generation's {@code SNAPSHOT} object holds (docs/formats/manifest.md): either every
 * rank's manifest digest ({@link SnapshotMarker}, version 1, up to one shard's worth of ranks)
 * or the digests of the shards that hold them ({@link ShardedMarker.Head}, version 2), so that
 * a restart of one rank of a million reads kilobytes, not the whole marker.
 */
public sealed interface CommitMarker permits SnapshotMarker, ShardedMarker.Head {
    String job();

    long generation();

    int ranks();

    Instant committedAt();
}
