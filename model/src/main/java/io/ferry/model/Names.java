package io.ferry.model;


/** Validation of the names Ferry turns into paths and keys: job ids and image-relative paths. */
public final class Names {

    private Names() {}

    /**
     * Returns {@code job} if it is a safe job id ({@code [A-Za-z0-9._-]{1,128}}, not {@code .}
     * or {@code ..}); otherwise throws {@link IllegalArgumentException} naming the value.
     * Called before any I/O, so a bad name never touches a store.
     */
    public static String requireJob(String job) {
        // The first a letter or digit: a name starting with '.' or '_' is hidden or temporary to some
        // stores and tools (the POSIX store's own temporary files start with '.'; Hadoop's input
        // formats skip '_' and '.'), and one starting with '-' reads as an option.
        if (job == null || !safe(job) || !Character.isLetterOrDigit(job.charAt(0))) {
            throw new IllegalArgumentException("unsafe job id " + quote(job)
                    + ": use 1-128 characters of A-Z a-z 0-9 . _ -, the first a letter or digit");
        }
        return job;
    }

    /** {@code [A-Za-z0-9._-]{1,128}}, without a regular expression: every event's job id is checked. */
    private static boolean safe(String s) {
        int n = s.length();
        if (n < 1 || n > 128) {
            return false;
        }
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.'
                    || c == '_' || c == '-')) {
                return false;
            }
        }
        return true;
    }

    /** {@code [0-9a-f]{64}}, checked without a regular expression (a marker may list a million). */
    public static boolean isSha256Hex(String d) {
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

    /**
     * The largest generation Ferry accepts: 2^53 - 1, a checkpoint a second for 285 million years,
     * far enough below {@code Long.MAX_VALUE} that "the next generation" never overflows, and exact
     * in a JSON double.
     */
    public static final long MAX_GENERATION = (1L << 53) - 1;

    public static long requireGeneration(long generation) {
        if (generation < 0 || generation > MAX_GENERATION) {
            throw new IllegalArgumentException("generation must be within 0.." + MAX_GENERATION
                    + ", got " + generation);
        }
        return generation;
    }

    /** A rank within 0..{@link RankSet#MAX_RANK}: what a job of the most ranks Ferry places can name. */
    public static int requireRank(int rank) {
        if (rank < 0 || rank > RankSet.MAX_RANK) {
            throw new IllegalArgumentException("rank must be within 0.." + RankSet.MAX_RANK + ", got " + rank);
        }
        return rank;
    }

    /**
     * Returns {@code path} if it is a safe relative path inside an image: '/'-separated, no
     * empty, '.' or '..' component, no leading '/', no control characters or backslashes.
     */
    public static String requireRelativePath(String path) {
        if (path == null || path.isEmpty() || path.length() > 4096) {
            throw new IllegalArgumentException("unsafe image path " + quote(path) + ": empty or too long");
        }
        for (int i = 0; i < path.length(); i++) {
            char c = path.charAt(i);
            if (c < 0x20 || c == 0x7f || c == '\\') {
                throw new IllegalArgumentException("unsafe image path " + quote(path)
                        + ": control character or backslash at index " + i);
            }
        }
        for (String part : path.split("/", -1)) {
            if (part.isEmpty() || part.equals(".") || part.equals("..")) {
                throw new IllegalArgumentException("unsafe image path " + quote(path)
                        + ": empty, '.' or '..' component");
            }
        }
        return path;
    }

    static String quote(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder b = new StringBuilder("'");
        for (char c : s.toCharArray()) {
            b.append(c < 0x20 || c == 0x7f ? String.format("\\x%02x", (int) c) : String.valueOf(c));
        }
        return b.append('\'').toString();
    }
}
