package io.ferry.model;

import java.util.List;
import java.util.Objects;

/** One entry of an image manifest: a regular file, a directory or a symbolic link. */
public sealed interface Entry {
    /** The '/'-separated path relative to the image directory. */
    String path();

    /**
     * A regular file: its permission bits, size, whole-file SHA-256 (hex) and the ids of its
     * chunks in order. In the chunk layout ({@code places} empty) every chunk but the last has
     * the manifest's chunk size. In the pack layout (manifest version 3) the chunks are blobs
     * cut by content, and {@code places} gives each one's length and pack record, in the same order.
     */
    record RegularFile(String path, int mode, long size, String sha256, List<ChunkId> chunks, List<BlobPlace> places)
            implements Entry {
        /**
         * {@code sha256} of a file whose whole-file digest was not recorded (manifest version 2):
         * its chunk ids, each the SHA-256 of its bytes, prove the file without it.
         */
        public static final String NOT_RECORDED = "";

        public RegularFile {
            Names.requireRelativePath(path);
            Objects.requireNonNull(sha256, "sha256");
            requireMode(mode);
            if (size < 0) {
                throw new IllegalArgumentException("file " + path + ": negative size " + size);
            }
            if (!NOT_RECORDED.equals(sha256) && !Names.isSha256Hex(sha256)) {
                throw new IllegalArgumentException("file " + path + ": sha256 must be 64 lower-case hex digits");
            }
            chunks = List.copyOf(chunks);
            places = List.copyOf(places);
            if (!places.isEmpty()) {
                if (places.size() != chunks.size()) {
                    throw new IllegalArgumentException("file " + path + ": " + chunks.size() + " blobs but "
                            + places.size() + " places");
                }
                long sum = 0;
                for (int i = 0; i < places.size(); i++) {
                    if (chunks.get(i).isZero() != places.get(i).isZero()) {
                        throw new IllegalArgumentException("file " + path + ": blob " + i
                                + (chunks.get(i).isZero() ? " is all zeros but has a pack record"
                                        : " has no pack record"));
                    }
                    sum += places.get(i).length();
                }
                if (sum != size) {
                    throw new IllegalArgumentException("file " + path + ": blob lengths add up to " + sum
                            + ", not its size " + size);
                }
            }
        }

        /** A file of the chunk layout (fixed-size chunks, manifest versions 1 and 2). */
        public RegularFile(String path, int mode, long size, String sha256, List<ChunkId> chunks) {
            this(path, mode, size, sha256, chunks, List.of());
        }

        /** Whether the file's chunks are blobs in packs (manifest version 3). */
        public boolean inPacks() {
            return !places.isEmpty();
        }

        /**
         * Where each chunk starts in the file, plus the file's size at the end ({@code chunks().size() + 1} values).
         */
        public long[] offsets(int chunkSize) {
            long[] at = new long[chunks.size() + 1];
            for (int i = 0; i < chunks.size(); i++) {
                at[i + 1] = places.isEmpty() ? Math.min(size, at[i] + chunkSize) : at[i] + places.get(i).length();
            }
            return at;
        }
    }

    /** A directory, recorded so that empty directories and their modes come back. */
    record Directory(String path, int mode) implements Entry {
        public Directory {
            Names.requireRelativePath(path);
            requireMode(mode);
        }
    }

    /**
     * A symbolic link, recorded as its target text and never followed: images are copied by
     * value, and a link (such as a trainer's {@code latest -> step_500}) comes back as a link.
     */
    record Symlink(String path, String target) implements Entry {
        public Symlink {
            Names.requireRelativePath(path);
            if (target == null || target.isEmpty() || target.indexOf('\0') >= 0) {
                throw new IllegalArgumentException("symlink " + path + ": empty or invalid target");
            }
        }
    }

    private static void requireMode(int mode) {
        if (mode < 0 || mode > 07777) {
            throw new IllegalArgumentException("mode must be within 0..07777, got " + Integer.toOctalString(mode));
        }
    }
}
