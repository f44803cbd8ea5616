package io.ferry.staging;

import io.ferry.model.ImageRef;
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
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Prune and two-step gc on a real POSIX store (fsynced files), with pushes landing in between. */
class StoreGcTest {
    private static final Duration GRACE = Duration.ofHours(1);
    @TempDir
    Path tmp;

    /** An image of two files: one shared by every generation, one only this seed's (64 KiB chunks: one chunk each). */
    private Path image(String name, long seed) throws Exception {
        Path dir = Files.createDirectories(tmp.resolve(name));
        byte[] shared = new byte[64 << 10];
        new Random(1).nextBytes(shared);
        byte[] own = new byte[64 << 10];
        new Random(seed).nextBytes(own);
        Files.write(dir.resolve("shared"), shared);
        Files.write(dir.resolve("own"), own);
        return dir;
    }

    /** The chunk layout, 64 KiB chunks: each file of {@link #image} is one chunk. */
    private static StagingPipeline chunkPipeline(Store store) {
        return Staging.pipeline(store,
                StagingConfig.from(Map.of("staging.layout", "chunks", "staging.chunk-size", "64KiB")),
                Clock.systemUTC());
    }

    private static Clock at(Instant t) {
        return Clock.fixed(t, ZoneOffset.UTC);
    }

    @Test
    void pruneKeepsTheNewestAndEveryKthAndGcCollectsOnlyWhatNoManifestNeedsEvenWithPushesInBetween() throws Exception {
        try (Store store = Stores.open(tmp.resolve("store").toUri(), Map.of());
             StagingPipeline pipeline = chunkPipeline(store)) {
            Repository repo = pipeline.repository();
            for (long g = 0; g <= 5; g++) {
                pipeline.push(image("g" + g, 100 + g), new ImageRef("job", g, 0), Progress.NONE);
                repo.commitSnapshot("job", g, 1);
            }
            pipeline.push(image("open", 200), new ImageRef("job", 6, 0), Progress.NONE); // in flight: no marker
            assertEquals(8, repo.listChunkKeys().size(), "one shared chunk and seven own ones");

            assertThrows(IllegalArgumentException.class, () -> StoreRetention.prune(repo, "job", 0, 0, false));
            StoreRetention.Pruned dry = StoreRetention.prune(repo, "job", 2, 5, true);
            assertEquals(List.of(1L, 2L, 3L), dry.dropped());
            assertEquals(7, repo.listGenerations().size(), "a dry run deletes nothing");
            StoreRetention.Pruned p = StoreRetention.prune(repo, "job", 2, 5, false);
            assertEquals(List.of(1L, 2L, 3L), p.dropped());
            assertEquals(List.of(0L, 4L, 5L, 6L), p.kept(), "the newest two, every fifth (0, 5), and the open one");
            assertEquals(List.of(0L, 4L, 5L, 6L),
                    repo.listGenerations().stream().map(Repository.GenerationListing::generation).toList());

            // A push whose chunk lookup happened before gc moves the chunks: its manifest lands after the move.
            pipeline.push(image("late", 101), new ImageRef("late", 0, 0), Progress.NONE); // own chunk = generation 1's
            byte[] lateManifest = store.get(Repository.manifestKey(new ImageRef("late", 0, 0)));
            store.delete(Repository.manifestKey(new ImageRef("late", 0, 0)));

            Instant t0 = Instant.parse("2026-11-23T10:00:00Z");
            // A push running beside the first step, of generation 2's content: it finds generation 2's own chunk
            // either still there (then it is put back in the second step) or gone (then it uploads it anew).
            CompletableFuture<Void> beside = CompletableFuture.runAsync(() -> {
                try {
                    pipeline.push(image("beside", 102), new ImageRef("beside", 0, 0), Progress.NONE);
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            StoreGc.Collected first = StoreGc.run(repo, GRACE, at(t0), false);
            beside.get();
            assertEquals(0, first.deleted());
            // Generations 1 and 3's own chunks, and 2's unless the push beside wrote its manifest before the scan.
            assertTrue(first.fossilized() == 2 || first.fossilized() == 3, first.toString());
            assertEquals(t0.plus(GRACE), first.waitUntil());
            // the late push ends
            store.put(Repository.manifestKey(new ImageRef("late", 0, 0)), ByteBuffer.wrap(lateManifest));

            StoreGc.Collected early = StoreGc.run(repo, GRACE, at(t0.plus(GRACE).minusSeconds(1)), false);
            assertEquals(t0.plus(GRACE), early.waitUntil(), "nothing happens before the grace period is over");
            assertEquals(0, early.deleted() + early.restored());

            StoreGc.Collected second = StoreGc.run(repo, GRACE, at(t0.plus(GRACE)), false);
            assertEquals(1, second.deleted(), "generation 3's own chunk, which nothing references: " + second);
            assertEquals(first.fossilized() - 1, second.restored(),
                    "1's (the late push) and 2's (the push beside): " + second);
            assertTrue(pipeline.verify(Progress.NONE).ok(), "every manifest's chunks are there");
            assertEquals(0, second.fossilized(), "nothing left unreferenced");
            assertTrue(store.list(StoreGc.FOSSILS).isEmpty());
            assertFalse(store.exists(StoreGc.RECORD));
            assertEquals(7, repo.listChunkKeys().size(), "shared, the own chunks of 0, 4, 5, 6, and 1's and 2's");
        }
    }

    @Test
    void aDamagedGcRecordStopsGcWithWhatToDoAndAnUnreadableManifestStopsItBeforeAnyMove() throws Exception {
        try (Store store = Stores.open(tmp.resolve("store").toUri(), Map.of());
             StagingPipeline pipeline = chunkPipeline(store)) {
            Repository repo = pipeline.repository();
            pipeline.push(image("g0", 100), new ImageRef("job", 0, 0), Progress.NONE);
            store.put(StoreGc.RECORD, ByteBuffer.wrap("junk".getBytes()));
            IOException e = assertThrows(IOException.class,
                    () -> StoreGc.run(repo, GRACE, Clock.systemUTC(), false));
            assertTrue(e.getMessage().contains("fossilized-at"), e.getMessage());
            store.delete(StoreGc.RECORD);
            store.put(Repository.manifestKey(new ImageRef("job", 1, 0)), ByteBuffer.wrap("{not a manifest".getBytes()));
            int chunks = repo.listChunkKeys().size();
            e = assertThrows(IOException.class, () -> StoreGc.run(repo, GRACE, Clock.systemUTC(), false));
            assertTrue(e.getMessage().contains("cannot be read"), e.getMessage());
            assertEquals(chunks, repo.listChunkKeys().size(), "nothing moved");
            assertNotNull(repo.readManifest(new ImageRef("job", 0, 0)));
        }
    }

    /**
     * The grace counts from the last move, not the first: a run killed while it moved things
     * aside leaves {@code fossilizing-since} (the state is made here by rewriting the record, as
     * a SIGKILL between the first and the last move leaves it; StoreGcIT kills a real gc), and
     * the next run lets the grace start again rather than delete what a push may still name.
     */
    @Test
    void aRunKilledWhileMovingThingsAsideMakesTheNextRunWaitAWholeGraceAgain() throws Exception {
        try (Store store = Stores.open(tmp.resolve("store").toUri(), Map.of());
             StagingPipeline pipeline = chunkPipeline(store)) {
            Repository repo = pipeline.repository();
            for (long g = 0; g <= 1; g++) {
                pipeline.push(image("k" + g, 300 + g), new ImageRef("job", g, 0), Progress.NONE);
                repo.commitSnapshot("job", g, 1);
            }
            StoreRetention.prune(repo, "job", 1, 0, false);
            Instant t0 = Instant.parse("2026-11-24T10:00:00Z");
            StoreGc.Collected first = StoreGc.run(repo, GRACE, at(t0), false);
            assertEquals(1, first.fossilized(), first.toString());
            assertEquals("fossilized-at " + t0.toEpochMilli(), new String(store.get(StoreGc.RECORD)).trim());

            store.put(StoreGc.RECORD, ByteBuffer.wrap(("fossilizing-since " + t0.toEpochMilli() + "\n").getBytes()));
            Instant later = t0.plus(GRACE.multipliedBy(2));
            StoreGc.Collected waits = StoreGc.run(repo, GRACE, at(later), false);
            assertEquals(0, waits.deleted(), "the moves of a killed run may be newer than its record: " + waits);
            assertEquals(later.plus(GRACE), waits.waitUntil());
            assertEquals(1, store.list(StoreGc.FOSSILS).size());
            StoreGc.Collected deletes = StoreGc.run(repo, GRACE, at(later.plus(GRACE)), false);
            assertEquals(1, deletes.deleted(), deletes.toString());
            assertTrue(store.list(StoreGc.FOSSILS).isEmpty());
            assertTrue(pipeline.verify(Progress.NONE).ok());
        }
    }
}
