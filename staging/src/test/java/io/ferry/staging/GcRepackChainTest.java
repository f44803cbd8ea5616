package io.ferry.staging;

import io.ferry.model.ImageRef;
import io.ferry.staging.packs.PackKeys;
import io.ferry.staging.packs.PackMoves;
import io.ferry.stores.Store;
import io.ferry.stores.Stores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * gc over a store whose repacked packs are repacked again (moves of moves), and gc in passes
 * over ranges of pack folders, on a real POSIX store.
 */
class GcRepackChainTest {
    private static final Duration GRACE = Duration.ofHours(1);
    private static final Instant T0 = Instant.parse("2026-11-24T10:00:00Z");
    @TempDir
    Path tmp;

    /** One worker, so a push fills its packs in file order: a.bin first. */
    private static StagingPipeline pipeline(Store store) {
        return Staging.pipeline(store, StagingConfig.from(Map.of("staging.layout", "packs", "staging.blob-size", "16KiB",
                "staging.pack-size", "1MiB", "staging.workers", "1", "staging.dedup-generations", "4")), Clock.systemUTC());
    }

    private Path image(String name, long seedA, int sizeA, long seedB) throws Exception {
        return Fixture.twoFiles(tmp.resolve(name), seedA, sizeA, seedB, 3 << 20);
    }

    private static StoreGc.Collected gc(Repository repo, int step, int passes) throws Exception {
        return StoreGc.run(repo, GRACE, Clock.fixed(T0.plus(GRACE.multipliedBy(step)), ZoneOffset.UTC), false, passes);
    }

    private void push(StagingPipeline p, Path image, String job, long g) throws Exception {
        p.push(image, new ImageRef(job, g, 0), Progress.NONE);
        p.repository().commitSnapshot(job, g, 1);
    }

    /**
     * Two jobs' small live files are repacked into one new pack; later the second job's part of
     * it dies and that pack is repacked again. The first job's manifest still names its original
     * pack, so the first moves object leads to the second: gc must keep both while the manifest
     * is kept, though no manifest names the pack in the middle.
     */
    void repackTwice(int passes) throws Exception {
        try (Store store = Stores.open(tmp.resolve("store-" + passes).toUri(), Map.of()); StagingPipeline p = pipeline(store)) {
            Repository repo = p.repository();
            Path x1 = image("x1-" + passes, 1, 256 << 10, 3);
            push(p, image("x0-" + passes, 1, 256 << 10, 2), "x", 0);
            push(p, x1, "x", 1); // a.bin kept (in generation 0's first pack), b.bin rewritten
            push(p, image("y0-" + passes, 5, 400 << 10, 6), "y", 0);
            push(p, image("y1-" + passes, 5, 400 << 10, 7), "y", 1);
            StoreRetention.prune(repo, "x", 1, 0, false);
            StoreRetention.prune(repo, "y", 1, 0, false);
            StoreGc.Collected first = gc(repo, 0, passes); // both first packs are mostly dead: into one new pack
            assertTrue(first.repacked() >= 2, first.toString());
            gc(repo, 1, passes); // the old packs go for good

            Path y2 = image("y2-" + passes, 8, 400 << 10, 7); // y rewrites a.bin: its part of the new pack dies
            push(p, y2, "y", 2);
            StoreRetention.prune(repo, "y", 1, 0, false);
            StoreGc.Collected third = gc(repo, 2, passes);
            if (passes == 1) {
                assertTrue(third.repacked() >= 1, "the new pack is mostly y's dead a.bin now: " + third);
            } else {
                // Each pass repacks into packs of its own: y's a.bin may have a new pack to itself, now garbage.
                assertTrue(third.repacked() + third.fossilized() >= 1, third.toString());
            }
            gc(repo, 3, passes); // the pack in the middle goes for good; its moves object must stay
            gc(repo, 4, passes);

            VerifyReport v = p.verify(Progress.NONE);
            assertTrue(v.ok(), v.problems().toString());
            p.pull(new ImageRef("x", 1, 0), tmp.resolve("out-x-" + passes), Progress.NONE);
            Fixture.assertSameTree(x1, tmp.resolve("out-x-" + passes));
            p.pull(new ImageRef("y", 2, 0), tmp.resolve("out-y-" + passes), Progress.NONE);
            Fixture.assertSameTree(y2, tmp.resolve("out-y-" + passes));
            if (passes == 1) {
                assertTrue(store.list(PackMoves.MOVED).size() >= 2, "x's pack, then the pack in the middle");
            }

            // Once x's generation 1 goes too, nothing needs the moves any more, and gc drops them.
            push(p, image("x2-" + passes, 9, 256 << 10, 3), "x", 2);
            StoreRetention.prune(repo, "x", 1, 0, false);
            for (int step = 5; step <= 8; step++) {
                gc(repo, step, passes);
            }
            assertEquals(List.of(), store.list(PackMoves.MOVED));
            assertTrue(p.verify(Progress.NONE).ok());
            assertTrue(!store.list(PackKeys.PACKS).isEmpty());
        }
    }

    @Test
    void aRecordMovedTwiceStaysReachableWhileAManifestNamesItsFirstPack() throws Exception {
        repackTwice(1);
    }

    @Test
    void gcInPassesOverRangesOfPackFoldersCollectsWhatOnePassDoes() throws Exception {
        repackTwice(16);
    }

    @Test
    void gcMakesEnoughPassesForAQuarterOfTheHeapToHoldOnePassesLiveRecords() throws Exception {
        assertEquals(1, StoreGc.passesFor(0, 256L << 20));
        assertEquals(1, StoreGc.passesFor(8192, 256L << 20), "8,192 packs of 512 records, 16 bytes each: 64 MiB");
        assertEquals(2, StoreGc.passesFor(8193, 256L << 20));
        assertEquals(256, StoreGc.passesFor(100_000_000, 1L << 30), "never more passes than pack folders");
        try (Store store = Stores.open(tmp.resolve("names").toUri(), Map.of()); StagingPipeline p = pipeline(store)) {
            push(p, image("n", 11, 300 << 10, 12), "n", 0);
            PackNames names = PackNames.list(store);
            List<String> keys = store.list(PackKeys.PACKS);
            assertEquals(keys.size(), names.size());
            assertEquals(keys.stream().map(k -> PackKeys.nameOf(k).orElseThrow()).toList(), names.inFolders(0, 256));
            for (String k : keys) {
                String name = PackKeys.nameOf(k).orElseThrow();
                assertTrue(names.contains(name));
                assertEquals(List.of(name), names.inFolders(PackNames.folderOf(name), PackNames.folderOf(name) + 1)
                        .stream().filter(name::equals).toList());
                String other = name.substring(0, 63) + (name.charAt(63) == '0' ? '1' : '0');
                assertEquals(keys.contains(PackKeys.packKey(other)), names.contains(other));
            }
            assertTrue(!names.contains("not-a-pack"));
        }
    }
}
