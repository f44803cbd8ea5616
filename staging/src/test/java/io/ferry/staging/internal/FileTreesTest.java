package io.ferry.staging.internal;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertFalse;

/** Deleting a tree while something else deletes it too (a launch clearing a rank's area, a failed capture in it). */
class FileTreesTest {
    @TempDir
    Path tmp;

    @Test
    void twoDeletesOfOneTreeAtOnceBothEndWithItGone() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 30; round++) {
                Path root = tmp.resolve("area-" + round);
                for (int d = 0; d < 8; d++) {
                    Path dir = Files.createDirectories(root.resolve("g" + d).resolve("rank"));
                    for (int f = 0; f < 16; f++) {
                        Files.write(dir.resolve("f" + f), new byte[1]);
                    }
                }
                List<Future<?>> both = new ArrayList<>();
                for (int t = 0; t < 2; t++) {
                    both.add(pool.submit(() -> {
                        FileTrees.delete(root);
                        return null;
                    }));
                }
                for (Future<?> f : both) {
                    f.get(); // neither fails for what the other deleted first
                }
                assertFalse(Files.exists(root), "round " + round);
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
