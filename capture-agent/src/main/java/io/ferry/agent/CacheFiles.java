package io.ferry.agent;

import io.ferry.model.ImageRef;
import io.ferry.model.OwnerOnly;
import io.ferry.model.Sizes;
import io.ferry.staging.LocalCache;
import io.ferry.staging.internal.FileTrees;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/** A captured rank's files on their way into the node cache, and what a full cache means for a capture. */
final class CacheFiles {
    private CacheFiles() {}

    /** fsyncs a rank's files in {@code src} and renames them into {@code <cache>/<job>/<g>/<rank>/}; returns bytes. */
    static long moveIn(LocalCache cache, Path src, ImageRef ref) throws IOException {
        Files.deleteIfExists(src.resolve("DONE"));
        long bytes = Durability.fsyncTree(src);
        Path dst = cache.imageDir(ref);
        FileTrees.delete(dst);
        OwnerOnly.createDirectories(dst.getParent());
        Files.move(src, dst, StandardCopyOption.ATOMIC_MOVE);
        Durability.fsyncDir(dst.getParent());
        return bytes;
    }

    /**
     * What a capture failure adds when the node cache's file system is (nearly) full, the likely
     * reason a rank could not write its image: "" otherwise, or when it cannot be read.
     */
    static String spaceNote(Path root) {
        try {
            FileStore fs = Files.getFileStore(root);
            long free = fs.getUsableSpace();
            long total = fs.getTotalSpace();
            if (free < Math.max(1L << 20, total / 100)) {
                return "; the node cache's file system (" + root + ") is full: " + Sizes.format(free) + " free of "
                        + Sizes.format(total);
            }
        } catch (IOException | RuntimeException unreadable) {
            // no note
        }
        return "";
    }
}
