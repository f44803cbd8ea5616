package io.ferry.cli;

import io.ferry.model.ChunkId;
import io.ferry.model.Entry;
import io.ferry.model.ImageRef;
import io.ferry.model.Manifest;
import io.ferry.staging.ImageCorruptException;
import io.ferry.staging.Progress;
import io.ferry.staging.Repository;
import io.ferry.staging.Staging;
import io.ferry.staging.StagingConfig;
import io.ferry.staging.StagingPipeline;
import io.ferry.staging.StoreGc;
import io.ferry.staging.StoreRetention;
import io.ferry.staging.VerifyReport;
import io.ferry.staging.crypt.Keys;
import io.ferry.staging.packs.PackKeys;
import io.ferry.stores.Store;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import static io.ferry.cli.ChunkedImages.CHUNK;
import static io.ferry.cli.ChunkedImages.image;
import static io.ferry.cli.ChunkedImages.pipeline;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The store conformance suite at the repository level, the same cases on {@code file:},
 * {@code hdfs:} (MiniDFSCluster) and {@code s3:} (s3proxy): an image round trip, the commit
 * marker as the only thing that establishes a snapshot, a corrupted and a missing chunk
 * (damaged through the store's own API, so every kind is damaged alike), and two nodes pushing
 * the same chunks at once; prune and gc with a push beside them. A gc killed midway and the gc lease
 * are {@link StoreGcOnEveryStoreIT}'s. Object-level cases are in each store module's StoreContractTest.
 */
class RepositoryOnEveryStoreIT {
    @TempDir
    static Path tmp;
    static EveryStore stores;
    private static final AtomicInteger N = new AtomicInteger();

    @BeforeAll
    static void start() throws Exception {
        stores = new EveryStore(tmp);
    }

    @AfterAll
    static void stop() throws Exception {
        stores.close();
    }

    private static Store open(String kind) throws Exception {
        return stores.open(kind);
    }

    @ParameterizedTest
    @ValueSource(strings = {"file", "hdfs", "s3"})
    void roundTripAndTheMarkerIsWhatEstablishes(String kind) throws Exception {
        Path img = image(tmp.resolve("img-" + kind + N.incrementAndGet()), 1);
        try (Store s = open(kind); StagingPipeline p = pipeline(s)) {
            ImageRef ref = new ImageRef("job", 3, 0);
            p.push(img, ref, Progress.NONE);
            assertFalse(p.repository().isEstablished("job", 3), "manifests alone establish nothing");
            p.repository().commitSnapshot("job", 3, 1);
            assertTrue(p.repository().isEstablished("job", 3));
            Path out = tmp.resolve("out-" + kind + N.incrementAndGet());
            p.pull(ref, out, Progress.NONE);
            assertArrayEquals(Files.readAllBytes(img.resolve("state.bin")),
                    Files.readAllBytes(out.resolve("state.bin")));
            assertArrayEquals(new byte[3 * CHUNK], Files.readAllBytes(out.resolve("zeros.bin")));
            assertTrue(p.verify(Progress.NONE).ok());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"file", "hdfs", "s3"})
    void anEncryptedImageRoundTripsAndNoStoredObjectHoldsItsPlaintext(String kind) throws Exception {
        Path img = image(tmp.resolve("img-" + kind + N.incrementAndGet()), 4);
        byte[] marker = "FERRY-MARKER-ON-EVERY-STORE".getBytes(StandardCharsets.US_ASCII);
        byte[] text = new byte[400_000];
        for (int i = 0; i + marker.length <= text.length; i += marker.length + 1) {
            System.arraycopy(marker, 0, text, i, marker.length);
        }
        Files.write(img.resolve("text.log"), text);
        var key = Optional.of(Keys.parse("5a".repeat(32), "test key"));
        try (Store s = open(kind); StagingPipeline p = Staging.pipeline(s, StagingConfig.defaults(), Clock.systemUTC(),
                key)) {
            ImageRef ref = new ImageRef("job", 1, 0);
            p.push(img, ref, Progress.NONE);
            p.repository().commitSnapshot("job", 1, 1);
            Path out = tmp.resolve("enc-" + kind + N.incrementAndGet());
            p.pull(ref, out, Progress.NONE);
            for (String f : List.of("state.bin", "zeros.bin", "text.log")) {
                assertArrayEquals(Files.readAllBytes(img.resolve(f)), Files.readAllBytes(out.resolve(f)), f);
            }
            assertTrue(p.verify(Progress.NONE).ok());
            List<String> keys = new ArrayList<>(s.list(PackKeys.PACKS));
            assertFalse(keys.isEmpty());
            keys.add(Repository.manifestKey(ref));
            for (String k : keys) {
                String bytes = new String(s.get(k), StandardCharsets.ISO_8859_1);
                assertFalse(bytes.contains(new String(marker, StandardCharsets.ISO_8859_1)), k);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"file", "hdfs", "s3"})
    void corruptedAndMissingChunksAreCaughtAndNamed(String kind) throws Exception {
        Path img = image(tmp.resolve("img-" + kind + N.incrementAndGet()), 2);
        try (Store s = open(kind); StagingPipeline p = pipeline(s)) {
            ImageRef ref = new ImageRef("job", 1, 0);
            p.push(img, ref, Progress.NONE);
            p.repository().commitSnapshot("job", 1, 1);
            Entry.RegularFile f = p.repository().readManifest(ref).manifest().entries().stream()
                    .filter(e -> e instanceof Entry.RegularFile r && r.path().equals("state.bin"))
                    .map(Entry.RegularFile.class::cast).findFirst().orElseThrow();
            ChunkId damaged = f.chunks().get(1);
            String key = Repository.chunkKey(damaged);
            byte[] bytes = s.get(key);
            bytes[bytes.length / 2] ^= 0x01;
            s.put(key, ByteBuffer.wrap(bytes));
            ImageCorruptException e = assertThrows(ImageCorruptException.class,
                    () -> p.pull(ref, tmp.resolve("bad-" + kind + N.incrementAndGet()), Progress.NONE));
            assertTrue(e.getMessage().contains("chunk 1 of 6 (" + damaged + ")"), e.getMessage());
            VerifyReport r = p.verify(Progress.NONE);
            assertEquals(VerifyReport.Kind.CORRUPT_CHUNK, r.problems().get(0).kind(), r.problems().toString());

            s.delete(key);
            Exception missing = assertThrows(Exception.class,
                    () -> p.pull(ref, tmp.resolve("gone-" + kind + N.incrementAndGet()), Progress.NONE));
            assertTrue(missing.getMessage().contains(damaged.toString()), missing.getMessage());
            assertFalse(p.verify(Progress.NONE).ok());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"file", "hdfs", "s3"})
    void twoNodesPushingTheSameChunksAtOnceLeaveAWholeRepository(String kind) throws Exception {
        Path img = image(tmp.resolve("img-" + kind + N.incrementAndGet()), 3);
        try (Store s = open(kind); StagingPipeline a = pipeline(s); StagingPipeline b = pipeline(s)) {
            ExecutorService pool = Executors.newFixedThreadPool(2);
            try {
                List<Future<?>> fs = new ArrayList<>();
                for (int rank = 0; rank < 2; rank++) {
                    StagingPipeline p = rank == 0 ? a : b;
                    ImageRef ref = new ImageRef("job", 0, rank);
                    fs.add(pool.submit(() -> p.push(img, ref, Progress.NONE)));
                }
                for (Future<?> f : fs) {
                    f.get();
                }
            } finally {
                pool.shutdown();
            }
            a.repository().commitSnapshot("job", 0, 2);
            assertTrue(a.verify(Progress.NONE).ok());
            Path out = tmp.resolve("same-" + kind + N.incrementAndGet());
            b.pull(new ImageRef("job", 0, 1), out, Progress.NONE);
            assertArrayEquals(Files.readAllBytes(img.resolve("state.bin")),
                    Files.readAllBytes(out.resolve("state.bin")));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"file", "hdfs", "s3"})
    void pruneAndGcDeleteOnlyWhatNoManifestNeedsWhileAPushRunsBeside(String kind) throws Exception {
        try (Store s = open(kind); StagingPipeline p = pipeline(s)) {
            Repository repo = p.repository();
            for (long g = 0; g <= 3; g++) {
                p.push(image(tmp.resolve("gc-" + kind + N.incrementAndGet()), 10 + (int) g), new ImageRef("job", g, 0),
                        Progress.NONE);
                repo.commitSnapshot("job", g, 1);
            }
            assertEquals(List.of(0L, 1L, 2L),
                    StoreRetention.prune(repo, "job", 1, 0, false).dropped());
            assertEquals(24, repo.listChunkKeys().size(),
                    "six chunks of each generation (the zero ones are never stored)");
            Instant t0 = Instant.parse("2026-11-23T10:00:00Z");
            Duration grace = Duration.ofHours(6);
            // generation 1's bytes, pushed anew
            Path again = image(tmp.resolve("gc-beside-" + kind + N.incrementAndGet()), 11);
            ExecutorService pool = Executors.newSingleThreadExecutor();
            try {
                Future<?> beside = pool.submit(() -> {
                    p.push(again, new ImageRef("other", 0, 0), Progress.NONE);
                    return null;
                });
                StoreGc.Collected first = StoreGc.run(repo, grace,
                        Clock.fixed(t0, ZoneOffset.UTC), false);
                beside.get();
                assertTrue(first.fossilized() >= 12,
                        "generations 0 and 2, and 1 unless the push beside came first: " + first);
            } finally {
                pool.shutdown();
            }
            StoreGc.Collected second = StoreGc.run(repo, grace,
                    Clock.fixed(t0.plus(grace), ZoneOffset.UTC), false);
            assertEquals(12, second.deleted(), "generations 0 and 2: " + second);
            assertEquals(12, repo.listChunkKeys().size(), "generation 3's and the push beside's");
            VerifyReport r = p.verify(Progress.NONE);
            assertTrue(r.ok(), r.problems().toString());
            Path out = tmp.resolve("gc-out-" + kind + N.incrementAndGet());
            p.pull(new ImageRef("other", 0, 0), out, Progress.NONE);
            assertArrayEquals(Files.readAllBytes(again.resolve("state.bin")),
                    Files.readAllBytes(out.resolve("state.bin")));
        }
    }

    /**
     * The pack layout on every store: three generations deduplicated against each other, pulled
     * back through ranged reads, scrubbed record by record, a damaged pack caught and named, and
     * the packs of pruned generations collected by gc while the kept ones still pull and verify.
     */
    @ParameterizedTest
    @ValueSource(strings = {"file", "hdfs", "s3"})
    void packLayoutRoundTripsDeduplicatesScrubsAndCollectsOnEveryStore(String kind) throws Exception {
        Map<String, String> packs = Map.of("staging.layout", "packs", "staging.blob-size", "16KiB", "staging.pack-size",
                "1MiB");
        try (Store s = open(kind); StagingPipeline p = Staging.pipeline(s, StagingConfig.from(packs),
                Clock.systemUTC())) {
            Repository repo = p.repository();
            Path dir = Files.createDirectories(tmp.resolve("packs-" + kind + N.incrementAndGet()));
            byte[] data = new byte[3 << 20];
            new Random(5).nextBytes(data);
            long[] stored = new long[3];
            for (int g = 0; g < 3; g++) {
                byte[] run = new byte[100_000];
                new Random(50 + g).nextBytes(run);
                System.arraycopy(run, 0, data, 700_000, run.length); // each generation rewrites the same 100 KB
                Files.write(dir.resolve("state.bin"), data);
                Files.write(dir.resolve("zeros.bin"), new byte[1 << 20]);
                stored[g] = p.push(dir, new ImageRef("job", g, 0), Progress.NONE).storedBytes();
                repo.commitSnapshot("job", g, 1);
            }
            assertTrue(stored[1] < stored[0] / 5 && stored[2] < stored[0] / 5,
                    "later generations write their rewrites only: " + Arrays.toString(stored));
            assertTrue(s.list("ferry/v1/chunks/").isEmpty());
            Path out = tmp.resolve("packs-out-" + kind + N.incrementAndGet());
            p.pull(new ImageRef("job", 2, 0), out, Progress.NONE);
            assertArrayEquals(data, Files.readAllBytes(out.resolve("state.bin")));
            assertArrayEquals(new byte[1 << 20], Files.readAllBytes(out.resolve("zeros.bin")));
            VerifyReport clean = p.verify(Progress.NONE);
            assertTrue(clean.ok(), clean.problems().toString());

            // Damage generation 2's newest pack through the store's own API: scrub and pull name it.
            Manifest m2 = repo.readManifest(new ImageRef("job", 2, 0)).manifest();
            String key = PackKeys.packKey(m2.packs().get(m2.packs().size() - 1));
            byte[] good = s.get(key);
            byte[] bad = good.clone();
            bad[40] ^= 0x01;
            s.put(key, ByteBuffer.wrap(bad));
            VerifyReport damaged = p.verify(Progress.NONE);
            assertTrue(damaged.problems().stream().anyMatch(x -> x.key().equals(key)), damaged.problems().toString());
            assertThrows(ImageCorruptException.class, () -> p.pull(new ImageRef("job", 2, 0),
                    tmp.resolve("packs-bad-" + kind + N.incrementAndGet()), Progress.NONE));
            s.put(key, ByteBuffer.wrap(good));

            assertEquals(List.of(0L, 1L), StoreRetention.prune(repo, "job", 1, 0, false).dropped());
            Instant t0 = Instant.parse("2026-11-23T10:00:00Z");
            Duration grace = Duration.ofHours(6);
            // A push of another job runs beside gc's first step: its packs are written before its manifest, so the
            // scan may see them unreferenced and move them aside; the second step must put them back.
            Path beside = Files.createDirectories(tmp.resolve("packs-beside-" + kind + N.incrementAndGet()));
            byte[] other = new byte[2 << 20];
            new Random(77).nextBytes(other);
            Files.write(beside.resolve("state.bin"), other);
            ExecutorService pool = Executors.newSingleThreadExecutor();
            StoreGc.Collected first;
            try {
                Future<?> push = pool.submit(() -> {
                    p.push(beside, new ImageRef("other", 0, 0), Progress.NONE);
                    return null;
                });
                first = StoreGc.run(repo, grace, Clock.fixed(t0, ZoneOffset.UTC), false);
                push.get();
            } finally {
                pool.shutdown();
            }
            StoreGc.Collected second = StoreGc.run(repo, grace,
                    Clock.fixed(t0.plus(grace), ZoneOffset.UTC), false);
            assertEquals(first.fossilized(), second.deleted() + second.restored(), second.toString());
            Path otherOut = tmp.resolve("packs-other-" + kind + N.incrementAndGet());
            p.pull(new ImageRef("other", 0, 0), otherOut, Progress.NONE);
            assertArrayEquals(other, Files.readAllBytes(otherOut.resolve("state.bin")));
            assertTrue(second.deleted() >= 1, "generation 1's pack holds only bytes generation 2 rewrote: " + second);
            int otherPacks = repo.readManifest(new ImageRef("other", 0, 0)).manifest().packs().size();
            assertTrue(s.list(PackKeys.PACKS).size() <= m2.packs().size() + otherPacks,
                    "no more than the packs generation 2 and the push beside need (repacked ones"
                            + " replaced one for one at most)");
            assertTrue(p.verify(Progress.NONE).ok());
            Path after = tmp.resolve("packs-after-" + kind + N.incrementAndGet());
            p.pull(new ImageRef("job", 2, 0), after, Progress.NONE);
            assertArrayEquals(data, Files.readAllBytes(after.resolve("state.bin")));
        }
    }
}
