package io.ferry.staging;

import io.ferry.compression.Digests;
import io.ferry.model.CommitMarker;
import io.ferry.model.MalformedManifestException;
import io.ferry.model.ShardedMarker;
import io.ferry.model.SnapshotMarker;
import io.ferry.stores.ObjectNotFoundException;

import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The manifest digests a committed generation holds, read as they are asked for: a sharded
 * marker's shard is read once, the first time one of its ranks is asked, and checked against the
 * digest its head committed (a shard swapped after the commit is refused). One node's restart
 * reads the head and the shard or two its ranks fall in. Thread-safe.
 */
public final class CommittedDigests {
    private final Repository repo;
    private final CommitMarker marker;
    private final Map<Integer, List<String>> shards = new ConcurrentHashMap<>();

    CommittedDigests(Repository repo, CommitMarker marker) {
        this.repo = repo;
        this.marker = marker;
    }

    public CommitMarker marker() {
        return marker;
    }

    /** The SHA-256 of {@code rank}'s manifest as committed. */
    public String manifestSha256(int rank) throws IOException {
        if (marker instanceof SnapshotMarker s) {
            if (rank < 0 || rank >= s.ranks()) {
                throw new IllegalArgumentException("snapshot " + s.job() + "/" + s.generation() + " has ranks 0.."
                        + (s.ranks() - 1) + ", not " + rank);
            }
            return s.manifestSha256().get(rank);
        }
        ShardedMarker.Head h = (ShardedMarker.Head) marker;
        int shard = h.shardOf(rank);
        List<String> d = shards.get(shard);
        if (d == null) {
            d = readShard(h, shard);
            shards.put(shard, d);
        }
        return d.get(rank - h.firstRank(shard));
    }

    /** Every rank's digest: the whole marker, each shard read and checked. */
    SnapshotMarker whole() throws IOException {
        if (marker instanceof SnapshotMarker s) {
            return s;
        }
        Map<Integer, String> all = new HashMap<>();
        for (int r = 0; r < marker.ranks(); r++) {
            all.put(r, manifestSha256(r));
        }
        return new SnapshotMarker(marker.job(), marker.generation(), marker.ranks(), all, marker.committedAt());
    }

    private List<String> readShard(ShardedMarker.Head h, int shard) throws IOException {
        String key = Repository.markerShardKey(h.job(), h.generation(), shard);
        byte[] bytes;
        try {
            bytes = repo.store().getAtMost(key, ReadLimits.MARKER);
        } catch (ObjectNotFoundException e) {
            throw new MalformedManifestException("snapshot " + h.job() + "/" + h.generation()
                    + " is committed but its digest shard " + key + " is missing", e);
        }
        if (!Digests.sha256Hex(bytes).equals(h.shardSha256().get(shard))) {
            throw new MalformedManifestException("digest shard " + key
                    + " is not the one its snapshot committed", null);
        }
        ShardedMarker.Shard s = ShardedMarker.decodeShard(bytes, key);
        if (!s.job().equals(h.job()) || s.generation() != h.generation() || s.firstRank() != h.firstRank(shard)
                || s.manifestSha256().size() != h.ranksIn(shard)) {
            throw new MalformedManifestException("digest shard " + key + " describes " + s.job() + "/" + s.generation()
                    + " ranks " + s.firstRank() + ".." + (s.firstRank() + s.manifestSha256().size() - 1)
                    + ", not the ranks its head gives it", null);
        }
        return s.manifestSha256();
    }
}
