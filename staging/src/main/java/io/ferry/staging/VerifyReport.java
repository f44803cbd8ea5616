package io.ferry.staging;

import java.util.List;

/**
 * The result of scrubbing a store.
 *
 * @param problems one line per damaged object or image, sorted; empty when all is well
 */
public record VerifyReport(long chunks, long chunkBytes, int manifests, int snapshots, List<Problem> problems) {
    public VerifyReport {
        problems = List.copyOf(problems);
    }

    /** What is damaged: a chunk, a manifest, a snapshot marker, or an image that needs a damaged chunk. */
    public record Problem(Kind kind, String key, String detail) implements Comparable<Problem> {
        @Override
        public int compareTo(Problem o) {
            int c = kind.compareTo(o.kind);
            return c != 0 ? c : key.compareTo(o.key);
        }

        @Override
        public String toString() {
            return kind + " " + key + ": " + detail;
        }
    }

    public enum Kind { CORRUPT_CHUNK, STRAY_OBJECT, BAD_MANIFEST, BAD_SNAPSHOT, DAMAGED_IMAGE }

    public boolean ok() {
        return problems.isEmpty();
    }
}
