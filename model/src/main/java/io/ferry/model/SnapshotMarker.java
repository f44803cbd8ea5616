package io.ferry.model;

import java.time.Instant;
import java.util.Map;

/**
 * The commit marker of a snapshot: written last, it makes a generation usable for restart.
 * It lists every rank's manifest by the SHA-256 of the manifest's bytes, so a restart can
 * tell a manifest swapped after the commit.
 */
public record SnapshotMarker(String job, long generation, int ranks, Map<Integer, String> manifestSha256,
                             Instant committedAt) implements CommitMarker {
    public SnapshotMarker {
        Names.requireJob(job);
        Names.requireGeneration(generation);
        if (ranks < 1) {
            throw new IllegalArgumentException("snapshot " + job + "/" + generation + ": ranks must be >= 1");
        }
        manifestSha256 = Map.copyOf(manifestSha256);
        if (manifestSha256.size() != ranks) {
            throw new IllegalArgumentException("snapshot " + job + "/" + generation + ": lists "
                    + manifestSha256.size() + " manifests for " + ranks + " ranks");
        }
        for (int r = 0; r < ranks; r++) {
            String d = manifestSha256.get(r);
            if (!Names.isSha256Hex(d)) {
                throw new IllegalArgumentException("snapshot " + job + "/" + generation
                        + ": rank " + r + " has no valid manifest digest");
            }
        }
        if (committedAt == null) {
            throw new IllegalArgumentException("snapshot " + job + "/" + generation + ": no commit time");
        }
    }
}
