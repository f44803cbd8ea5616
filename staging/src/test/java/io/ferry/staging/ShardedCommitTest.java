package io.ferry.staging;

import io.ferry.model.ImageRef;
import io.ferry.model.ManifestCodec;
import io.ferry.model.MalformedManifestException;
import io.ferry.model.ShardedMarker;
import io.ferry.model.SnapshotMarker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Commit markers of more ranks than a shard holds, on a real POSIX store: written in shards
 * under one head, each rank's digest read from its own shard, every shard checked against the
 * head, and pruned, verified and pulled like one-object markers. Shards of 3 ranks here.
 */
class ShardedCommitTest {
    private static final int RANKS = 7;
    @TempDir
    Path tmp;

    private Fixture pushRanks(long generation) throws Exception {
        Fixture fx = new Fixture(tmp);
        for (int r = 0; r < RANKS; r++) {
            Path dir = tmp.resolve("img/" + generation + "/" + r);
            Fixture.write(dir.resolve("state"), Fixture.randomBytes(1000 + r, generation * 100 + r));
            fx.pipeline.push(dir, new ImageRef("job", generation, r), Progress.NONE);
        }
        return fx;
    }

    private static Repository sharding(Fixture fx) {
        return new Repository(fx.store, Clock.systemUTC(), 3);
    }

    private Path key(String key) {
        return tmp.resolve("store").resolve(key);
    }

    @Test
    void aWideSnapshotIsCommittedInShardsAndEachRanksDigestComesFromItsShard() throws Exception {
        try (Fixture fx = pushRanks(4)) {
            SnapshotMarker committed = sharding(fx).commitSnapshot("job", 4, RANKS);
            assertTrue(Files.exists(key(Repository.markerShardKey("job", 4, 2))), "shards 0, 1, 2 for 7 ranks of 3");
            assertFalse(Files.exists(key(Repository.markerShardKey("job", 4, 3))));
            CommittedDigests c = fx.pipeline.repository().committed("job", 4).orElseThrow();
            assertInstanceOf(ShardedMarker.Head.class, c.marker(), "any reader reads it, whatever its own shard size");
            for (int r = 0; r < RANKS; r++) {
                assertEquals(fx.pipeline.repository().readManifest(new ImageRef("job", 4, r)).sha256(),
                        c.manifestSha256(r));
            }
            assertEquals(committed, fx.pipeline.repository().readMarker("job", 4).orElseThrow(),
                    "the whole marker, assembled");
            assertThrows(IllegalArgumentException.class, () -> c.manifestSha256(RANKS));
            assertTrue(fx.pipeline.verify(Progress.NONE).ok());

            Repository.GenerationListing g = fx.pipeline.repository().listGenerations("job").get(0);
            assertEquals(List.of(0, 1, 2, 3, 4, 5, 6), g.ranks());
            assertEquals(3, g.markerShards().size());
        }
    }

    @Test
    void aSnapshotThatFitsOneShardIsTheVersionOneObjectOlderFerryReads() throws Exception {
        try (Fixture fx = pushRanks(5)) {
            SnapshotMarker m = new Repository(fx.store, Clock.systemUTC(), RANKS).commitSnapshot("job", 5, RANKS);
            byte[] bytes = Files.readAllBytes(key(Repository.markerKey("job", 5)));
            assertArrayEquals(ManifestCodec.encode(m), bytes);
            assertEquals(m, ManifestCodec.decodeMarker(bytes, "SNAPSHOT"));
        }
    }

    @Test
    void aShardSwappedOrLostAfterTheCommitIsRefusedAndTheVerifierSaysSo() throws Exception {
        try (Fixture fx = pushRanks(6)) {
            sharding(fx).commitSnapshot("job", 6, RANKS);
            Path shard1 = key(Repository.markerShardKey("job", 6, 1));
            // A well-formed shard of the same ranks with rank 4's digest replaced by rank 0's: only the head tells.
            String forged = Files.readString(shard1).replace(
                    fx.pipeline.repository().readManifest(new ImageRef("job", 6, 4)).sha256(),
                    fx.pipeline.repository().readManifest(new ImageRef("job", 6, 0)).sha256());
            Files.writeString(shard1, forged);
            CommittedDigests c = fx.pipeline.repository().committed("job", 6).orElseThrow();
            assertEquals(fx.pipeline.repository().readManifest(new ImageRef("job", 6, 0)).sha256(), c.manifestSha256(0),
                    "shard 0 is intact");
            MalformedManifestException e = assertThrows(MalformedManifestException.class, () -> c.manifestSha256(4));
            assertTrue(e.getMessage().contains("not the one its snapshot committed"), e.getMessage());
            VerifyReport report = fx.pipeline.verify(Progress.NONE);
            assertTrue(report.problems().stream().anyMatch(p -> p.kind() == VerifyReport.Kind.BAD_SNAPSHOT),
                    report.toString());

            Files.delete(shard1);
            e = assertThrows(MalformedManifestException.class,
                    () -> fx.pipeline.repository().committed("job", 6).orElseThrow().manifestSha256(3));
            assertTrue(e.getMessage().contains("is missing"), e.getMessage());
            Path dest = tmp.resolve("pulled");
            assertThrows(MalformedManifestException.class,
                    () -> fx.pipeline.pull(new ImageRef("job", 6, 3), dest, Progress.NONE));
            assertFalse(Files.exists(dest),
                    "nothing pulled from a generation whose commit cannot be read whole for it");
        }
    }

    @Test
    void aManifestSwappedAfterAShardedCommitIsNotPulled() throws Exception {
        try (Fixture fx = pushRanks(7)) {
            sharding(fx).commitSnapshot("job", 7, RANKS);
            ImageRef ref = new ImageRef("job", 7, 5);
            Path dir = tmp.resolve("img/7/5");
            Fixture.write(dir.resolve("state"), Fixture.randomBytes(1005, 12345)); // same size, other bytes
            fx.pipeline.push(dir, ref, Progress.NONE); // the manifest at the key changes; the marker does not
            ImageCorruptException e = assertThrows(ImageCorruptException.class,
                    () -> fx.pipeline.pull(ref, tmp.resolve("p5"), Progress.NONE));
            assertTrue(e.getMessage().contains("differs from the one its snapshot committed"), e.getMessage());
            assertTrue(fx.pipeline.pull(new ImageRef("job", 7, 4), tmp.resolve("p4"), Progress.NONE).committed());
        }
    }

    @Test
    void pruneDeletesTheShardsWithTheirHeadAndShardsLeftByAKilledCommit() throws Exception {
        try (Fixture fx = pushRanks(1)) {
            Repository repo = sharding(fx);
            repo.commitSnapshot("job", 1, RANKS);
            for (int r = 0; r < RANKS; r++) {
                Path dir = tmp.resolve("img/2/" + r);
                Fixture.write(dir.resolve("state"), Fixture.randomBytes(10, r));
                fx.pipeline.push(dir, new ImageRef("job", 2, r), Progress.NONE);
            }
            repo.commitSnapshot("job", 2, RANKS);
            repo.commitSnapshot("job", 1, RANKS); // nothing changes: idempotent
            // as if killed between prune's deletes, or before the head
            Files.delete(key(Repository.markerKey("job", 1)));
            StoreRetention.Pruned p = StoreRetention.prune(fx.pipeline.repository(), "job", 1, 0, false);
            assertEquals(List.of(1L), p.dropped());
            for (int i = 0; i < 3; i++) {
                assertFalse(Files.exists(key(Repository.markerShardKey("job", 1, i))));
                assertTrue(Files.exists(key(Repository.markerShardKey("job", 2, i))));
            }
            assertTrue(fx.pipeline.verify(Progress.NONE).ok());
        }
    }
}
