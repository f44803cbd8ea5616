package io.ferry.staging;

import io.ferry.model.ImageRef;
import io.ferry.staging.packs.PackKeys;
import io.ferry.staging.packs.PackMoves;
import io.ferry.stores.Store;
import io.ferry.stores.Stores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Scrub, prune and two-step gc of a pack-layout store, on a real POSIX store. */
class PackStoreTest {
    private static final Duration GRACE = Duration.ofHours(1);
    @TempDir
    Path tmp;

    private Path image(String name, long seed) throws Exception {
        Path dir = Files.createDirectories(tmp.resolve(name));
        byte[] own = new byte[1 << 20];
        new Random(seed).nextBytes(own);
        Files.write(dir.resolve("state.bin"), own);
        return dir;
    }

    private static StagingPipeline pipeline(Store store) {
        Map<String, String> s = new HashMap<>(PackStoreTestBase.PACKS);
        s.put("staging.dedup-generations", "4");
        return Staging.pipeline(store, StagingConfig.from(s), Clock.systemUTC());
    }

    @Test
    void scrubChecksEveryRecordAndNamesTheImagesADamagedPackBreaks() throws Exception {
        try (Store store = Stores.open(tmp.resolve("store").toUri(), Map.of()); StagingPipeline p = pipeline(store)) {
            PushResult pushed = p.push(image("a", 1), new ImageRef("job", 1, 0), Progress.NONE);
            p.repository().commitSnapshot("job", 1, 1);
            VerifyReport clean = p.verify(Progress.NONE);
            assertTrue(clean.ok(), clean.problems().toString());
            assertEquals(pushed.newChunks(), clean.chunks(), "every record of every pack was decoded");

            String pack = store.list(PackKeys.PACKS).get(0);
            byte[] bytes = store.get(pack);
            bytes[bytes.length / 3] ^= 0x10;
            store.put(pack, ByteBuffer.wrap(bytes));
            VerifyReport damaged = p.verify(Progress.NONE);
            assertTrue(damaged.problems().stream()
                    .anyMatch(x -> x.kind() == VerifyReport.Kind.CORRUPT_CHUNK && x.key().equals(pack)),
                    damaged.problems().toString());
            assertTrue(damaged.problems().stream().anyMatch(x -> x.kind() == VerifyReport.Kind.DAMAGED_IMAGE
                    && x.key().equals("job/1/0") && x.detail().contains(pack.substring(pack.lastIndexOf('/') + 1))),
                    damaged.problems().toString());

            store.delete(pack);
            VerifyReport missing = p.verify(Progress.NONE);
            assertTrue(missing.problems().stream().anyMatch(x -> x.detail().contains("no such pack")),
                    missing.problems().toString());
        }
    }

    @Test
    void repairQuarantinesAPackWithADamagedRecordSoTheNextPushWritesItsBlobsAgain() throws Exception {
        try (Store store = Stores.open(tmp.resolve("store").toUri(), Map.of()); StagingPipeline p = pipeline(store)) {
            Path a = image("a", 7);
            p.push(a, new ImageRef("job", 1, 0), Progress.NONE);
            p.repository().commitSnapshot("job", 1, 1);
            String pack = store.list(PackKeys.PACKS).get(0);
            byte[] bytes = store.get(pack);
            bytes[bytes.length / 3] ^= 0x10; // one record rots on the store
            store.put(pack, ByteBuffer.wrap(bytes));
            PushResult g2 = p.push(a, new ImageRef("job", 2, 0), Progress.NONE);
            p.repository().commitSnapshot("job", 2, 1);
            assertEquals(g2.chunks(), g2.knownChunks(),
                    "a push reuses every place of a pack that exists, the rotten one too");
            assertThrows(IOException.class,
                    () -> p.pull(new ImageRef("job", 2, 0), tmp.resolve("out2"), Progress.NONE));

            VerifyReport damaged = p.verify(Progress.NONE);
            List<ChunkQuarantine.Outcome> done = PackQuarantine.repair(p.repository(), damaged);
            assertEquals(1, done.size(), done.toString());
            assertTrue(done.get(0).quarantined() && done.get(0).detail().contains("1 damaged record"), done.toString());
            assertFalse(store.exists(pack));
            assertEquals(1, store.list(PackQuarantine.QUARANTINE).size());
            assertTrue(ChunkQuarantine.repair(p.repository(), damaged).isEmpty(), "packs are not the chunk repair's");

            // The next push writes the blobs of the quarantined pack again, and pulls whole.
            PushResult g3 = p.push(a, new ImageRef("job", 3, 0), Progress.NONE);
            p.repository().commitSnapshot("job", 3, 1);
            // Its sound records are reused where the quarantine copied them; the damaged one is written again.
            assertTrue(g3.newChunks() >= 1 && g3.knownChunks() > 0 && g3.knownChunks() < g3.chunks(), g3.toString());
            p.pull(new ImageRef("job", 3, 0), tmp.resolve("out3"), Progress.NONE);
            Fixture.assertSameTree(a, tmp.resolve("out3"));
            // The older images: their sound records resolve through the moves; the damaged one is gone.
            VerifyReport after = p.verify(Progress.NONE);
            assertTrue(after.problems().stream().noneMatch(x -> x.kind() == VerifyReport.Kind.CORRUPT_CHUNK),
                    after.problems().toString());
            List<String> broken = after.problems().stream().filter(x -> x.kind() == VerifyReport.Kind.DAMAGED_IMAGE)
                    .map(VerifyReport.Problem::key).distinct().sorted().toList();
            assertEquals(List.of("job/1/0", "job/2/0"), broken, after.problems().toString());

            // The heal pass finds generation 3's sound copy of the damaged blob and maps the damaged record to it:
            // the older images come back whole, as they do when a quarantined chunk object is written again.
            PackHeal.Healed healed = PackHeal.run(p.repository());
            assertEquals(1, healed.healed(), healed.toString());
            assertEquals(0, healed.missing(), healed.toString());
            VerifyReport whole = p.verify(Progress.NONE);
            assertTrue(whole.ok(), whole.problems().toString());
            for (long g : new long[]{1, 2}) {
                p.pull(new ImageRef("job", g, 0), tmp.resolve("healed" + g), Progress.NONE);
                Fixture.assertSameTree(a, tmp.resolve("healed" + g));
            }
            assertEquals(0, PackHeal.run(p.repository()).healed(), "a healed record is not healed twice");
        }
    }

    @Test
    void aDamagedRecordWithoutACopyStaysForALaterHeal() throws Exception {
        try (Store store = Stores.open(tmp.resolve("store").toUri(), Map.of()); StagingPipeline p = pipeline(store)) {
            p.push(image("a", 9), new ImageRef("job", 1, 0), Progress.NONE);
            p.repository().commitSnapshot("job", 1, 1);
            String pack = store.list(PackKeys.PACKS).get(0);
            byte[] bytes = store.get(pack);
            bytes[bytes.length / 3] ^= 0x10;
            store.put(pack, ByteBuffer.wrap(bytes));
            PackQuarantine.repair(p.repository(), p.verify(Progress.NONE));
            PackHeal.Healed none = PackHeal.run(p.repository());
            assertEquals(0, none.healed(), none.toString());
            assertEquals(1, none.missing(), "no push wrote the blob again: " + none);
            assertThrows(IOException.class,
                    () -> p.pull(new ImageRef("job", 1, 0), tmp.resolve("out"), Progress.NONE));
        }
    }

    @Test
    void gcDeletesPacksNoKeptManifestNeedsAndPutsBackOnesALatePushReferenced() throws Exception {
        try (Store store = Stores.open(tmp.resolve("store").toUri(), Map.of()); StagingPipeline p = pipeline(store)) {
            Repository repo = p.repository();
            for (long g = 0; g <= 2; g++) {
                p.push(image("g" + g, 100 + g), new ImageRef("job", g, 0), Progress.NONE);
                repo.commitSnapshot("job", g, 1);
            }
            List<String> all = store.list(PackKeys.PACKS);
            StoreRetention.prune(repo, "job", 2, 0, false); // drops generation 0
            // A push of generation 0's bytes, deduplicated against generation 0's packs (still in this node's cache),
            // whose manifest lands only after gc's first step: its packs must come back.
            PushResult late = p.push(image("late", 100), new ImageRef("job", 3, 0), Progress.NONE);
            assertEquals(late.chunks(), late.knownChunks(), "generation 0's packs are still on the store");
            byte[] lateManifest = store.get(Repository.manifestKey(new ImageRef("job", 3, 0)));
            store.delete(Repository.manifestKey(new ImageRef("job", 3, 0)));

            Instant t0 = Instant.parse("2026-11-23T10:00:00Z");
            StoreGc.Collected first = StoreGc.run(repo, GRACE, Clock.fixed(t0, ZoneOffset.UTC), false);
            assertTrue(first.fossilized() >= 1, first.toString());
            assertEquals(all.size() - first.fossilized(), store.list(PackKeys.PACKS).size());

            // A push after the first step does not count on a pack moved aside: it writes the blobs again.
            PushResult after = p.push(image("after", 100), new ImageRef("job", 4, 0), Progress.NONE);
            assertEquals(after.chunks(), after.newChunks(), after.toString());
            // the late push ends
            store.put(Repository.manifestKey(new ImageRef("job", 3, 0)), ByteBuffer.wrap(lateManifest));

            StoreGc.Collected second = StoreGc.run(repo, GRACE, Clock.fixed(t0.plus(GRACE), ZoneOffset.UTC), false);
            assertEquals(first.fossilized(), second.restored(),
                    "generation 3's manifest needs generation 0's packs: " + second);
            assertEquals(0, second.deleted());
            assertTrue(store.list(StoreGc.FOSSILS).isEmpty());
            assertTrue(p.verify(Progress.NONE).ok());
            p.pull(new ImageRef("job", 3, 0), tmp.resolve("out3"), Progress.NONE);
            assertEquals(-1, Files.mismatch(tmp.resolve("late/state.bin"), tmp.resolve("out3/state.bin")));

            // Drop 3 and 4 (keep the newest two established: 1 and 2; 3 and 4 are not committed, so commit them first).
            repo.commitSnapshot("job", 3, 1);
            repo.commitSnapshot("job", 4, 1);
            StoreRetention.prune(repo, "job", 1, 0, false); // keeps 4 only
            StoreGc.Collected third = StoreGc.run(repo, GRACE,
                    Clock.fixed(t0.plus(GRACE.multipliedBy(2)), ZoneOffset.UTC), false);
            StoreGc.Collected fourth = StoreGc.run(repo, GRACE,
                    Clock.fixed(t0.plus(GRACE.multipliedBy(3)), ZoneOffset.UTC), false);
            assertEquals(third.fossilized(), fourth.deleted(), fourth.toString());
            assertTrue(fourth.deleted() >= 3, "the packs of 0 (with 3), 1 and 2: " + fourth);
            assertTrue(p.verify(Progress.NONE).ok());
            p.pull(new ImageRef("job", 4, 0), tmp.resolve("out4"), Progress.NONE);
            assertEquals(-1, Files.mismatch(tmp.resolve("after/state.bin"), tmp.resolve("out4/state.bin")));
            assertFalse(store.list(PackKeys.PACKS).isEmpty());
        }
    }

    private Path twoFiles(String name, long seedA, long seedB) throws Exception {
        return Fixture.twoFiles(tmp.resolve(name), seedA, 512 << 10, seedB, 3 << 20);
    }

    @Test
    void gcRepacksMostlyDeadPacksAndPullsAndScrubsFollowTheMoves() throws Exception {
        try (Store store = Stores.open(tmp.resolve("store").toUri(), Map.of()); StagingPipeline p = pipeline(store)) {
            Repository repo = p.repository();
            p.push(twoFiles("g0", 1, 2), new ImageRef("job", 0, 0), Progress.NONE);
            repo.commitSnapshot("job", 0, 1);
            Path g1 = twoFiles("g1", 1, 3); // a.bin kept, b.bin rewritten
            p.push(g1, new ImageRef("job", 1, 0), Progress.NONE);
            repo.commitSnapshot("job", 1, 1);
            // generation 0 goes: its b.bin is dead, its a.bin lives on in 1
            StoreRetention.prune(repo, "job", 1, 0, false);
            Instant t0 = Instant.parse("2026-11-23T10:00:00Z");

            StoreGc.Collected first = StoreGc.run(repo, GRACE, Clock.fixed(t0, ZoneOffset.UTC), false);
            assertTrue(first.repacked() >= 1, "generation 0's packs are mostly b.bin: " + first);
            assertTrue(first.repackedBytes() > 0 && first.repackedBytes() < (1 << 20), first.toString());
            assertEquals(first.repacked(), store.list(PackMoves.MOVED).size());
            VerifyReport v = p.verify(Progress.NONE);
            assertTrue(v.ok(), v.problems().toString());
            p.pull(new ImageRef("job", 1, 0), tmp.resolve("out1"), Progress.NONE);
            Fixture.assertSameTree(g1, tmp.resolve("out1"));

            // A push after the repack finds generation 1's a.bin where the repack moved it: nothing
            // of it is written again.
            PushResult again = p.push(g1, new ImageRef("job", 2, 0), Progress.NONE);
            assertEquals(0, again.newChunks(), "every blob is on the store, some of them moved: " + again);
            repo.commitSnapshot("job", 2, 1);
            p.pull(new ImageRef("job", 2, 0), tmp.resolve("out9"), Progress.NONE);
            Fixture.assertSameTree(g1, tmp.resolve("out9"));

            StoreGc.Collected second = StoreGc.run(repo, GRACE, Clock.fixed(t0.plus(GRACE), ZoneOffset.UTC), false);
            assertEquals(first.fossilized(), second.deleted(), "the repacked packs are gone for good: " + second);
            assertEquals(0, second.restored());
            assertTrue(p.verify(Progress.NONE).ok());
            p.pull(new ImageRef("job", 1, 0), tmp.resolve("out2"), Progress.NONE);
            Fixture.assertSameTree(g1, tmp.resolve("out2"));

            // Generation 3 rewrites a.bin too: once 1 and 2 are pruned, nothing names generation
            // 0's packs, and their moves go.
            Path g2 = twoFiles("g2", 4, 3);
            p.push(g2, new ImageRef("job", 3, 0), Progress.NONE);
            repo.commitSnapshot("job", 3, 1);
            StoreRetention.prune(repo, "job", 1, 0, false);
            StoreGc.run(repo, GRACE, Clock.fixed(t0.plus(GRACE.multipliedBy(2)), ZoneOffset.UTC), false);
            StoreGc.run(repo, GRACE, Clock.fixed(t0.plus(GRACE.multipliedBy(3)), ZoneOffset.UTC), false);
            StoreGc.run(repo, GRACE, Clock.fixed(t0.plus(GRACE.multipliedBy(4)), ZoneOffset.UTC), false);
            assertEquals(List.of(), store.list(PackMoves.MOVED));
            assertTrue(p.verify(Progress.NONE).ok());
            p.pull(new ImageRef("job", 3, 0), tmp.resolve("out3"), Progress.NONE);
            Fixture.assertSameTree(g2, tmp.resolve("out3"));
        }
    }
}
