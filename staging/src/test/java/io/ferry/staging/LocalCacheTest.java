package io.ferry.staging;

import io.ferry.model.ImageRef;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LocalCacheTest {
    @TempDir
    Path tmp;

    @Test
    void directoriesTheCacheCreatesAreOwnerOnly() throws Exception {
        LocalCache c = Staging.localCache(tmp.resolve("cache"));
        Path incoming = c.incomingDir(new ImageRef("j", 5, 0));
        for (Path d = incoming; !d.equals(tmp); d = d.getParent()) {
            org.junit.jupiter.api.Assertions.assertEquals("rwx------", java.nio.file.attribute.PosixFilePermissions.toString(
                    Files.getPosixFilePermissions(d)), d.toString());
        }
    }

    private LocalCache cacheWith(long... gens) throws Exception {
        LocalCache c = Staging.localCache(tmp);
        for (long g : gens) {
            for (int r = 0; r < 2; r++) {
                ImageRef ref = new ImageRef("j", g, r);
                Fixture.write(c.imageDir(ref).resolve("state"), new byte[]{(byte) g});
                c.markStaged(ref);
            }
        }
        return c;
    }

    @Test
    void keepsTheNewestGenerations() throws Exception {
        LocalCache c = cacheWith(1, 2, 3, 4);
        assertEquals(List.of(2L, 1L), c.applyRetention("j", 2, g -> true));
        assertEquals(List.of(3L, 4L), c.generations("j"));
    }

    @Test
    void neverDropsTheNewestEstablishedGeneration() throws Exception {
        LocalCache c = cacheWith(1, 2, 3, 4);
        // 3 and 4 are not established remotely yet (their marker is missing): 2 must stay.
        Set<Long> established = Set.of(1L, 2L);
        assertEquals(List.of(1L), c.applyRetention("j", 2, established::contains));
        assertEquals(List.of(2L, 3L, 4L), c.generations("j"));
    }

    @Test
    void aGenerationTheStoreCannotAnswerForIsKeptWithTheNewestItSaysIsEstablished() throws Exception {
        LocalCache c = cacheWith(1, 2, 3, 4);
        // The store is down for 3's marker: 3 may be the newest established generation. Before, "cannot say"
        // counted as "not established", so 2 was taken for the newest and 3 was dropped.
        assertEquals(List.of(1L), c.applyRetention("j", 1, g -> g == 3 ? null : g <= 2));
        assertEquals(List.of(2L, 3L, 4L), c.generations("j"));
        assertEquals(List.of(), c.applyRetention("j", 1, g -> null), "the store says nothing: everything stays");
    }

    @Test
    void neverDropsAnImageNotYetStaged() throws Exception {
        LocalCache c = cacheWith(1, 2, 3);
        Fixture.write(c.imageDir(new ImageRef("j", 1, 2)).resolve("state"), new byte[]{9}); // rank 2 unstaged
        assertEquals(List.of(), c.applyRetention("j", 2, g -> g == 3));
        assertEquals(List.of(1L, 2L, 3L), c.generations("j"));
    }

    @Test
    void dropLeavesNoHalfDeletedGeneration() throws Exception {
        LocalCache c = cacheWith(1);
        c.drop("j", 1);
        try (var s = Files.list(tmp.resolve("j"))) {
            assertEquals(0, s.count());
        }
    }

    @Test
    void usageCountsTheJobsBytesAndGenerations() throws Exception {
        LocalCache c = cacheWith(1, 2, 3);
        Fixture.write(c.imageDir(new ImageRef("other", 1, 0)).resolve("state"), new byte[5000]);
        LocalCache.Usage u = c.usage("j");
        assertEquals(6, u.jobBytes(), "one byte per rank per generation, the other job not counted");
        assertEquals(3, u.generations());
        assertTrue(u.capacityBytes() > 0 && u.freeBytes() <= u.capacityBytes());
        c.applyRetention("j", 1, g -> true);
        LocalCache.Usage after = c.usage("j"); // free space is the disk's: other writers move it, so it is not compared
        assertEquals(List.of(u.capacityBytes(), 2L, 1L), List.of(after.capacityBytes(), after.jobBytes(), (long) after.generations()));
        assertEquals(0, c.usage("never-seen").jobBytes());
    }

    @Test
    void unsafeJobNamesAreRefused() {
        LocalCache c = Staging.localCache(tmp);
        assertThrows(IllegalArgumentException.class, () -> c.generations("../etc"));
        assertThrows(IllegalArgumentException.class, () -> c.applyRetention("..", 1, g -> true));
    }
}
