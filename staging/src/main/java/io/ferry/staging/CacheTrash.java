package io.ferry.staging;

import io.ferry.staging.internal.FileTrees;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * What a killed process left of a deletion in a node-local cache. {@link LocalCache} deletes a
 * job, generation or image by renaming it to a hidden {@code .trash-*} entry beside it, then
 * deleting that: nothing half-deleted is ever taken for an image. A process killed between the
 * two (or while deleting) leaves the trash for ever, bytes that no job owns and no retention
 * counts. {@link #sweep} deletes every trash entry, at the cache's root, in a job's directory
 * or in a generation's, untouched for a while (a deletion in progress keeps touching its
 * directory, as it removes what it holds). Stateless.
 */
public final class CacheTrash {
    /** What one sweep removed: the trash entries and their bytes. */
    public record Swept(List<Path> removed, long freedBytes) {
        public Swept {
            removed = List.copyOf(removed);
        }
    }

    private CacheTrash() {
    }

    /** Deletes the trash entries under {@code root} untouched for {@code olderThan} at {@code nowMillis}. */
    public static Swept sweep(Path root, Duration olderThan, long nowMillis) throws IOException {
        List<Path> removed = new ArrayList<>();
        long[] freed = {0};
        for (Path job : entries(root)) {
            if (isTrash(job)) {
                collect(job, olderThan, nowMillis, removed, freed);
            } else if (Files.isDirectory(job, LinkOption.NOFOLLOW_LINKS)) {
                for (Path gen : entries(job)) {
                    if (isTrash(gen)) {
                        collect(gen, olderThan, nowMillis, removed, freed);
                    } else if (Files.isDirectory(gen, LinkOption.NOFOLLOW_LINKS)) {
                        for (Path image : entries(gen)) {
                            if (isTrash(image)) {
                                collect(image, olderThan, nowMillis, removed, freed);
                            }
                        }
                    }
                }
            }
        }
        return new Swept(removed, freed[0]);
    }

    private static boolean isTrash(Path p) {
        return p.getFileName().toString().startsWith(".trash-");
    }

    private static void collect(Path trash, Duration olderThan, long nowMillis, List<Path> removed, long[] freed)
            throws IOException {
        try {
            long touched = Files.getLastModifiedTime(trash, LinkOption.NOFOLLOW_LINKS).toMillis();
            if (nowMillis - touched < olderThan.toMillis()) {
                return; // a deletion may be under way
            }
            long bytes = LocalCache.bytesUnder(trash);
            FileTrees.delete(trash);
            removed.add(trash);
            freed[0] += bytes;
        } catch (NoSuchFileException gone) {
            // its own deletion finished meanwhile
        }
    }

    private static List<Path> entries(Path dir) throws IOException {
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return List.of();
        }
        List<Path> out = new ArrayList<>();
        try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
            s.forEach(out::add);
        } catch (NoSuchFileException gone) {
            return List.of();
        }
        return out;
    }
}
