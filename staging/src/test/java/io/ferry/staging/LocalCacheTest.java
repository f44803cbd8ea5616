package io.ferry.staging;

import io.ferry.model.ImageRef;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

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
            Assertions.assertEquals("rwx------",
                    PosixFilePermissions.toString(
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
    void aGenerationStagedHereWhoseMarkerIsNotWrittenYetStaysForItMayBeEstablishedNext() throws Exception {
        // Seen in a three-node run: staging two generations behind the captures, this node staged its last
        // image of 1 while 1's marker did not exist yet (the coordinator writes it once every node staged):
        // 1 was dropped, became the newest established a moment later, and the restart after a node loss
        // read this node's ranks from a partner and the store instead of this cache.
        LocalCache c = cacheWith(0, 1, 2, 3);
        assertEquals(List.of(), c.applyRetention("j", 2, g -> g == 0));
        assertEquals(List.of(0L, 1L, 2L, 3L), c.generations("j"));
        // once 2 is established, 1 and 0 are older than it and go (3 and 2 are the newest two)
        assertEquals(List.of(1L, 0L), c.applyRetention("j", 2, g -> g <= 2));
        assertEquals(List.of(2L, 3L), c.generations("j"));
        assertEquals(List.of(), cacheWith(1, 2, 3).applyRetention("j", 1, g -> false),
                "none established yet: every generation may be the first");
    }

    @Test
    void neverDropsAnImageNotYetStaged() throws Exception {
        LocalCache c = cacheWith(1, 2, 3);
        Fixture.write(c.imageDir(new ImageRef("j", 1, 2)).resolve("state"), new byte[]{9}); // rank 2 unstaged
        assertEquals(List.of(), c.applyRetention("j", 2, g -> g == 3));
        assertEquals(List.of(1L, 2L, 3L), c.generations("j"));
    }

    @Test
    void dropDeletesTheWholeGeneration() throws Exception {
        LocalCache c = cacheWith(1);
        c.drop("j", 1);
        try (var s = Files.list(tmp.resolve("j"))) {
            assertEquals(0, s.count());
        }
    }

    /**
     * A drop killed part-way (SIGKILL of a child JVM, seen past its rename aside and with files of
     * the generation still left to delete) leaves either the whole generation or none of it:
     * what is left half-deleted is out of the cache's sight. The kill is only counted once the
     * child is seen mid-way and the leftovers show it was; a child that finished first, or was
     * killed before it deleted anything, is tried again with more files.
     */
    @Test
    void dropLeavesNoHalfDeletedGeneration() throws Exception {
        for (int attempt = 0, files = 4000; attempt < 6; attempt++, files *= 2) {
            Path root = tmp.resolve("kill-" + attempt);
            LocalCache c = Staging.localCache(root);
            for (long g = 1; g <= 2; g++) {
                for (int r = 0; r < 2; r++) {
                    ImageRef ref = new ImageRef("j", g, r);
                    int n = g == 1 ? files / 2 : 3;
                    for (int i = 0; i < n; i++) {
                        Fixture.write(c.imageDir(ref).resolve("d" + i / 100).resolve("f" + i), new byte[]{(byte) i});
                    }
                    c.markStaged(ref);
                }
            }
            Map<Long, Integer> whole = Map.of(1L, files + 2, 2L, 2 * 3 + 2);
            assertEquals(whole.get(1L), regularFiles(root.resolve("j").resolve("1")));

            Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp", System.getProperty("java.class.path"), DropInChild.class.getName(),
                    root.toString(), "j", "1")
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            boolean killedMidway = false;
            try {
                Path gen1 = root.resolve("j").resolve("1");
                while (child.isAlive()) { // bounded: the child ends when its drop does
                    // A cheap look, many times a millisecond (a walk of the files took longer than the drop): the
                    // generation's directory gone and its renamed-aside copy there is a drop under way.
                    if (!Files.exists(gen1) && trashOf(root.resolve("j"), 1)) {
                        child.destroyForcibly();
                        killedMidway = true;
                        break;
                    }
                    Thread.onSpinWait();
                }
            } finally {
                child.destroyForcibly();
                assertTrue(child.waitFor(60, TimeUnit.SECONDS), "the child JVM ends once killed");
            }
            int left = filesLeft(root.resolve("j"), 1);
            // What the look saw may be off (a walk that raced the rename): the leftovers say where the kill fell.
            killedMidway = killedMidway && left > 0;
            // Whatever the kill hit, every generation the cache shows is whole.
            for (long g : c.generations("j")) {
                assertEquals(whole.get(g), regularFiles(root.resolve("j").resolve(Long.toString(g))),
                        "generation " + g);
            }
            assertTrue(c.generations("j").contains(2L), "the generation not dropped stays");
            if (killedMidway) {
                assertEquals(List.of(2L), c.generations("j"),
                        "the drop got past its rename: generation 1 is gone from sight");
                System.out.println("drop killed on attempt " + attempt + " with " + left + " of " + whole.get(1L)
                        + " files left");
                assertTrue(c.isStaged(new ImageRef("j", 2, 0)) && !c.isStaged(new ImageRef("j", 1, 0)));
                return;
            }
            if (!killedMidway && !child.isAlive() && child.exitValue() == 0) {
                assertEquals(List.of(2L), c.generations("j"), "a drop that finished took generation 1 away");
            }
        }
        Assertions.fail("no drop was ever seen part-way through deleting, even with "
                + (4000 << 5) + " files");
    }

    private static int regularFiles(Path dir) throws IOException {
        try (var s = Files.walk(dir)) {
            return (int) s.filter(Files::isRegularFile).count();
        }
    }

    /** Whether a renamed-aside copy of {@code generation} ({@code .trash-<generation>-*}) is in {@code jobDir}. */
    private static boolean trashOf(Path jobDir, long generation) {
        try (var dirs = Files.list(jobDir)) {
            return dirs.anyMatch(p -> p.getFileName().toString().startsWith(".trash-" + generation + "-"));
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Files of {@code generation} still there, where the drop left them (its directory, or renamed
     * aside as {@code .trash-<generation>-*}), counted while the drop deletes them.
     */
    private static int filesLeft(Path jobDir, long generation) {
        int n = 0;
        String gen = Long.toString(generation);
        try (var dirs = Files.list(jobDir)) {
            for (Path t : (Iterable<Path>) dirs.filter(p -> p.getFileName().toString().equals(gen)
                    || p.getFileName().toString().startsWith(".trash-" + gen + "-"))::iterator) {
                try (var s = Files.walk(t)) {
                    n += (int) s.filter(Files::isRegularFile).count();
                } catch (UncheckedIOException | IOException deletedWhileCounting) {
                    n += 1; // still being deleted: some left, however many
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return n;
    }

    /** The drop a child JVM runs, to be killed part-way: {@code <cache root> <job> <generation>}. */
    static final class DropInChild {
        public static void main(String[] args) throws Exception {
            Staging.localCache(Path.of(args[0])).drop(args[1], Long.parseLong(args[2]));
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
        assertEquals(List.of(u.capacityBytes(), 2L, 1L),
                List.of(after.capacityBytes(), after.jobBytes(), (long) after.generations()));
        assertEquals(0, c.usage("never-seen").jobBytes());
    }

    @Test
    void unsafeJobNamesAreRefused() {
        LocalCache c = Staging.localCache(tmp);
        assertThrows(IllegalArgumentException.class, () -> c.generations("../etc"));
        assertThrows(IllegalArgumentException.class, () -> c.applyRetention("..", 1, g -> true));
    }

    /** Writes rank {@code rank}'s image of generation {@code g} of job {@code job} (100 bytes), staged or not. */
    private static void own(LocalCache c, String job, long g, int rank, boolean staged) throws Exception {
        ImageRef ref = new ImageRef(job, g, rank);
        Fixture.write(c.imageDir(ref).resolve("state"), new byte[100]);
        if (staged) {
            c.markStaged(ref);
        }
    }

    private static void partner(LocalCache c, String job, long g, int rank) throws Exception {
        ImageRef ref = new ImageRef(job, g, rank);
        Path in = c.incomingDir(ref);
        Fixture.write(in.resolve("state"), new byte[100]);
        c.installPartnerCopy(in, ref);
    }

    @Test
    void aFinishedJobGoesWholeStagedOrNot() throws Exception {
        LocalCache c = Staging.localCache(tmp);
        own(c, "j", 1, 0, true);
        own(c, "j", 2, 0, false);
        partner(c, "j", 2, 1);
        Fixture.write(c.root().resolve("j/.restart/0/state"), new byte[100]);
        own(c, "other", 1, 0, false);
        LocalCache.Reclaimed r = c.reclaim("j", LocalCache.Standing.FINISHED);
        assertEquals(400, r.freedBytes());
        assertEquals(List.of(), r.keptUnstaged());
        assertEquals(List.of("other"), c.jobs(), "nothing of j left, not even a half-deleted directory");
        assertEquals(List.of(1L), c.generations("other"));
    }

    @Test
    void anEndedJobLosesWhatTheStoreHoldsAndKeepsWhatOnlyThisCacheHolds() throws Exception {
        LocalCache c = Staging.localCache(tmp);
        own(c, "j", 1, 0, true);
        own(c, "j", 2, 0, true);
        own(c, "j", 2, 1, false); // not staged: the only copy, and a run of the job again may stage it
        own(c, "j", 3, 0, true);
        partner(c, "j", 3, 1); // staged by the node that captured it
        Fixture.write(c.root().resolve("j/.restart/0/state"), new byte[100]);
        LocalCache.Reclaimed r = c.reclaim("j", LocalCache.Standing.ENDED);
        assertEquals(List.of(2L), r.keptUnstaged());
        assertEquals(List.of(2L), c.generations("j"));
        assertEquals(400, r.freedBytes(), "generations 1 and 3 and the restore area");
        assertTrue(Files.exists(c.imageDir(new ImageRef("j", 2, 1)).resolve("state")));
        assertTrue(Files.notExists(c.root().resolve("j/.restart")));
        c.markStaged(new ImageRef("j", 2, 1));
        c.reclaim("j", LocalCache.Standing.ENDED);
        assertEquals(List.of(), c.jobs(), "once all is staged, the job's directory goes too");
    }

    @Test
    void aJobThatMovedOffKeepsPartnerCopiesAndImagesNotYetStaged() throws Exception {
        LocalCache c = Staging.localCache(tmp);
        own(c, "j", 1, 0, true);
        partner(c, "j", 1, 2); // another node's rank: still its restore source while the job runs
        own(c, "j", 2, 0, false);
        own(c, "j", 3, 0, true);
        LocalCache.Reclaimed r = c.reclaim("j", LocalCache.Standing.MOVED_OFF);
        assertEquals(List.of("generation 1 ranks 0", "generation 3 ranks 0"), r.removed());
        assertEquals(200, r.freedBytes());
        assertEquals(List.of(2L), r.keptUnstaged());
        assertEquals(List.of(1L, 2L), c.generations("j"), "generation 3 held nothing else and went");
        assertTrue(c.isPartnerCopy(new ImageRef("j", 1, 2)));
        assertTrue(Files.notExists(c.imageDir(new ImageRef("j", 1, 0))));
        assertTrue(!c.isStaged(new ImageRef("j", 1, 0)), "no marker left for an image that is gone");
        assertTrue(Files.exists(c.imageDir(new ImageRef("j", 2, 0)).resolve("state")));
    }

    @Test
    void jobsListsTheJobsDirectoriesOnly() throws Exception {
        LocalCache c = Staging.localCache(tmp.resolve("cache"));
        assertEquals(List.of(), c.jobs(), "no cache yet");
        own(c, "b", 1, 0, true);
        own(c, "a", 1, 0, true);
        Files.createDirectories(c.root().resolve(".trash-x-1"));
        assertEquals(List.of("a", "b"), c.jobs());
        assertTrue(c.lastModifiedMillis("a") > 0);
        assertEquals(0, c.lastModifiedMillis("never-seen"));
    }
}
