package io.ferry.staging;

import io.ferry.model.ImageRef;
import io.ferry.staging.packs.PackFormat;
import io.ferry.staging.packs.PackKeys;
import io.ferry.staging.packs.PackMoves;
import io.ferry.stores.Store;
import io.ferry.stores.Stores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;

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
        return Staging.pipeline(store,
                StagingConfig.from(Map.of("staging.layout", "packs", "staging.blob-size", "16KiB",
                "staging.pack-size", "1MiB", "staging.workers", "1", "staging.dedup-generations", "4")),
                Clock.systemUTC());
    }

    private Path image(String name, long seedA, int sizeA, long seedB) throws Exception {
        return Fixture.twoFiles(tmp.resolve(name), seedA, sizeA, seedB, 3 << 20);
    }

    private static StoreGc.Collected gc(Repository repo, int step, int passes) throws Exception {
        return StoreGc.run(repo, GRACE, Clock.fixed(T0.plus(GRACE.multipliedBy(step)), ZoneOffset.UTC), false, passes);
    }

    /**
     * gc in {@code passes} passes, checked against one pass over a copy of the same store taken
     * just before: both must count the same, move aside the same packs and keep the same records
     * live. Only the packs a repack writes may differ (each pass writes packs of its own), so live
     * packs are compared by the blobs they hold, not by name.
     */
    private StoreGc.Collected gcSameAsOnePass(Store store, Repository repo, int step, int passes) throws Exception {
        if (passes == 1) {
            return gc(repo, step, 1);
        }
        Path storeDir = Path.of(store.uri());
        Path copyDir = tmp.resolve("one-pass-copy-" + step);
        copyTree(storeDir, copyDir);
        StoreGc.Collected one;
        Map<String, Object> oneState;
        try (Store copy = Stores.open(copyDir.toUri(), Map.of()); StagingPipeline q = pipeline(copy)) {
            one = gc(q.repository(), step, 1);
            oneState = state(copy);
        }
        StoreGc.Collected many = gc(repo, step, passes);
        assertEquals(one, many, "gc step " + step + " in " + passes + " passes against one pass over the same store");
        assertEquals(oneState, state(store),
                "the store after gc step " + step + " in " + passes + " passes and in one");
        return many;
    }

    /**
     * What gc decides, independent of how repacks group records into new packs: every object
     * that is not a pack or a moves object by key; the live packs as the multiset of blobs they
     * hold; the pack fossils and moves objects by the old pack they name.
     */
    private static Map<String, Object> state(Store store) throws Exception {
        TreeMap<String, Integer> liveBlobs = new TreeMap<>();
        TreeSet<String> other = new TreeSet<>();
        for (String key : store.list("")) {
            if (key.startsWith(PackKeys.PACKS) && PackKeys.nameOf(key).isPresent()) {
                byte[] pack = store.get(key);
                for (PackFormat.Record r : PackFormat.records(pack, pack.length)) {
                    liveBlobs.merge(r.id().toString(), 1, Integer::sum);
                }
            } else {
                other.add(key);
            }
        }
        return Map.of("live blobs in packs", liveBlobs, "other objects", other);
    }

    private static void copyTree(Path from, Path to) throws Exception {
        try (Stream<Path> all = Files.walk(from)) {
            for (Path f : (Iterable<Path>) all::iterator) {
                Path t = to.resolve(from.relativize(f).toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(t);
                } else {
                    Files.copy(f, t, StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        }
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
        // With more than one pass, each gc step is checked against one pass over a copy of the store.
        try (Store store = Stores.open(tmp.resolve("store-" + passes).toUri(),
                Map.of()); StagingPipeline p = pipeline(store)) {
            Repository repo = p.repository();
            Path x1 = image("x1-" + passes, 1, 256 << 10, 3);
            push(p, image("x0-" + passes, 1, 256 << 10, 2), "x", 0);
            push(p, x1, "x", 1); // a.bin kept (in generation 0's first pack), b.bin rewritten
            push(p, image("y0-" + passes, 5, 400 << 10, 6), "y", 0);
            push(p, image("y1-" + passes, 5, 400 << 10, 7), "y", 1);
            StoreRetention.prune(repo, "x", 1, 0, false);
            StoreRetention.prune(repo, "y", 1, 0, false);
            // both first packs are mostly dead: into one new pack
            StoreGc.Collected first = gcSameAsOnePass(store, repo, 0, passes);
            assertTrue(first.repacked() >= 2, first.toString());
            gcSameAsOnePass(store, repo, 1, passes); // the old packs go for good

            Path y2 = image("y2-" + passes, 8, 400 << 10, 7); // y rewrites a.bin: its part of the new pack dies
            push(p, y2, "y", 2);
            StoreRetention.prune(repo, "y", 1, 0, false);
            StoreGc.Collected third = gcSameAsOnePass(store, repo, 2, passes);
            if (passes == 1) {
                assertTrue(third.repacked() >= 1, "the new pack is mostly y's dead a.bin now: " + third);
            } else {
                // Each pass repacks into packs of its own: y's a.bin may have a new pack to itself, now garbage.
                assertTrue(third.repacked() + third.fossilized() >= 1, third.toString());
            }
            gcSameAsOnePass(store, repo, 3, passes); // the pack in the middle goes for good; its moves object must stay
            gcSameAsOnePass(store, repo, 4, passes);

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
                gcSameAsOnePass(store, repo, step, passes);
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
