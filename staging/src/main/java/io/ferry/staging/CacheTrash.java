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
    /** Where trash lies: the cache's root, a job's directory, a generation's. */
    private static final int LEVELS = 3;

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
        List<Path> trash = new ArrayList<>();
        find(root, LEVELS, trash);
        List<Path> removed = new ArrayList<>();
        long freed = 0;
        for (Path t : trash) {
            try {
                if (nowMillis - Files.getLastModifiedTime(t, LinkOption.NOFOLLOW_LINKS)
                        .toMillis() < olderThan.toMillis()) {
                    continue; // a deletion may be under way
                }
                long bytes = LocalCache.bytesUnder(t);
                FileTrees.delete(t);
                removed.add(t);
                freed += bytes;
            } catch (NoSuchFileException gone) {
                // its own deletion finished meanwhile
            }
        }
        return new Swept(removed, freed);
    }

    /** Adds the trash entries in {@code dir} and, {@code levels} deep, in the directories below it. */
    private static void find(Path dir, int levels, List<Path> trash) throws IOException {
        for (Path p : entries(dir)) {
            if (p.getFileName().toString().startsWith(".trash-")) {
                trash.add(p);
            } else if (levels > 1 && Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                find(p, levels - 1, trash);
            }
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
