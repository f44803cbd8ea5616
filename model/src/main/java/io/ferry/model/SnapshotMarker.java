package io.ferry.model;

import java.time.Instant;
import java.util.Map;

/**
 * The commit marker of a snapshot: written last, it makes a generation usable for restart.
 * It lists every rank's manifest by the SHA-256 of the manifest's bytes, so a restart can
 * tell a manifest swapped after the commit.
 */
public record SnapshotMarker(String job, long generation, int ranks, Map<Integer, String> manifestSha256,
                             Instant committedAt) {
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
            if (!isSha256Hex(d)) {
                throw new IllegalArgumentException("snapshot " + job + "/" + generation
                        + ": rank " + r + " has no valid manifest digest");
            }
        }
        if (committedAt == null) {
            throw new IllegalArgumentException("snapshot " + job + "/" + generation + ": no commit time");
        }
    }

    /** {@code [0-9a-f]{64}}, checked without a regular expression (a marker may list a million). */
    private static boolean isSha256Hex(String d) {
        if (d == null || d.length() != 64) {
            return false;
        }
        for (int i = 0; i < 64; i++) {
            char c = d.charAt(i);
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
                return false;
            }
        }
        return true;
    }
}
