package io.ferry.staging;

import io.ferry.model.ImageRef;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CacheTrashTest {
    @TempDir
    Path tmp;

    /**
     * What a process killed in the middle of each kind of deletion leaves (a job's, a
     * generation's, an image's trash), old enough, goes; fresh trash (a deletion under way) and
     * everything else stays.
     */
    @Test
    void oldTrashAtEveryLevelGoesAndNothingElse() throws Exception {
        LocalCache cache = new LocalCache(tmp.resolve("cache"));
        Path image = cache.imageDir(new ImageRef("j", 3, 0));
        Files.createDirectories(image);
        Files.write(image.resolve("mem"), new byte[100]);
        Path root = cache.root();
        Path jobTrash = trash(root.resolve(".trash-old-1a2b"), 1000);
        Path genTrash = trash(root.resolve("j/.trash-2-77"), 2000);
        Path imageTrash = trash(root.resolve("j/3/.trash-1-99"), 3000);
        Path fresh = Files.createDirectories(root.resolve("j/.trash-5-aa"));
        Files.write(fresh.resolve("part"), new byte[10]);
        for (Path p : List.of(jobTrash, genTrash, imageTrash)) {
            Files.setLastModifiedTime(p,
                    FileTime.fromMillis(System.currentTimeMillis() - Duration.ofHours(1).toMillis()));
        }

        CacheTrash.Swept swept = CacheTrash.sweep(root, Duration.ofMinutes(10), System.currentTimeMillis());

        Set<Path> removed = new TreeSet<>(swept.removed());
        assertEquals(new TreeSet<>(List.of(jobTrash, genTrash, imageTrash)), removed);
        assertEquals(6000, swept.freedBytes());
        for (Path p : removed) {
            assertFalse(Files.exists(p), p.toString());
        }
        assertTrue(Files.exists(fresh.resolve("part")), "a deletion under way is left to finish");
        assertEquals(List.of(0), cache.unstagedRanks("j", 3), "the image beside the trash stays");
        assertTrue(Files.exists(image.resolve("mem")));
        assertEquals(List.of("j"), cache.jobs());
    }

    @Test
    void aCacheWithoutTrashOrWithoutARootIsLeftAlone() throws Exception {
        assertEquals(List.of(), CacheTrash.sweep(tmp.resolve("none"), Duration.ZERO,
                System.currentTimeMillis()).removed());
        LocalCache cache = new LocalCache(tmp.resolve("cache"));
        Files.createDirectories(cache.imageDir(new ImageRef("j", 0, 0)));
        assertEquals(List.of(), CacheTrash.sweep(cache.root(), Duration.ZERO, System.currentTimeMillis()).removed());
        assertTrue(Files.isDirectory(cache.imageDir(new ImageRef("j", 0, 0))));
    }

    /** A trash directory holding {@code bytes} bytes in a nested file, as a half-done deletion leaves it. */
    private static Path trash(Path dir, int bytes) throws Exception {
        Files.createDirectories(dir.resolve("0"));
        Files.write(dir.resolve("0/mem"), new byte[bytes]);
        return dir;
    }
}
