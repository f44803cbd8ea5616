package io.ferry.cli;

import io.ferry.model.ChunkId;
import io.ferry.model.Entry;
import io.ferry.model.ImageRef;
import io.ferry.model.Manifest;
import io.ferry.staging.GcLease;
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
import io.ferry.stores.Stores;
import io.ferry.stores.hdfs.MiniHdfs;
import io.ferry.stores.s3.S3ProxyServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.net.URI;
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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import static io.ferry.cli.ChunkedImages.CHUNK;
import static io.ferry.cli.ChunkedImages.image;
import static io.ferry.cli.ChunkedImages.pipeline;
import static io.ferry.cli.StoreCommands.FOSSILS;
import static io.ferry.cli.StoreCommands.count;
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
 * the same chunks at once; prune and gc with a push beside them, and (on HDFS and S3: POSIX is
 * {@link StoreGcIT}'s) `ferry store gc` SIGKILLed midway. Object-level cases are in each store
 * module's StoreContractTest.
 */
class RepositoryOnEveryStoreIT {
    @TempDir
    static Path tmp;
    static MiniHdfs hdfs;
    static S3ProxyServer s3;
    private static final AtomicInteger N = new AtomicInteger();

    @BeforeAll
    static void start() throws Exception {
        hdfs = new MiniHdfs(tmp.resolve("hdfs"));
        s3 = new S3ProxyServer(tmp.resolve("s3")).bucket("ferry");
    }

    @AfterAll
    static void stop() throws Exception {
        s3.close();
        hdfs.close();
    }

    private static Store open(String kind) throws Exception {
        int n = N.incrementAndGet();
        return switch (kind) {
            case "file" -> Stores.open(tmp.resolve("posix" + n).toUri(), Map.of());
            case "hdfs" -> Stores.open(hdfs.uri("/repo" + n), Map.of());
            case "s3" -> Stores.open(URI.create("s3://ferry/repo" + n), s3.options());
            default -> throw new IllegalArgumentException(kind);
        };
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

    /**
     * `ferry store gc` SIGKILLed while it repacks, on HDFS and S3, as {@link StoreGcIT} does it on POSIX:
     * the store still verifies and the kept generation pulls, and the next runs finish the work. On these
     * stores a move aside is a copy and a delete (S3) or a rename (HDFS); the test's own store client
     * watches for the first moves to kill the command among them.
     */
    @ParameterizedTest
    @ValueSource(strings = {"hdfs", "s3"})
    void aGcKilledWhileRepackingLeavesAStoreThatVerifiesAndPulls(String kind) throws Exception {
        Path img0 = Files.createDirectories(tmp.resolve(kind + "-p0"));
        Path img1 = Files.createDirectories(tmp.resolve(kind + "-p1"));
        byte[] kept = new byte[1 << 20];
        new Random(7).nextBytes(kept);
        byte[] big = new byte[24 << 20];
        new Random(8).nextBytes(big);
        Files.write(img0.resolve("kept"), kept);
        Files.write(img0.resolve("big"), big);
        Files.write(img1.resolve("kept"), kept);
        Files.writeString(img1.resolve("big"), "rewritten");
        Map<String, String> packs = Map.of("staging.layout", "packs", "staging.blob-size", "16KiB", "staging.pack-size",
                "1MiB");
        StoreCommands cli = kind.equals("hdfs") ? new StoreCommands(hdfs.uri("/gc-killed").toString(), Map.of())
                : new StoreCommands("s3://ferry/gc-killed", s3.options());
        try (Store s = Stores.open(URI.create(cli.uri()), cli.options())) {
            try (StagingPipeline p = Staging.pipeline(s, StagingConfig.from(packs), Clock.systemUTC())) {
                p.push(img0, new ImageRef("sim", 0, 0), Progress.NONE);
                p.repository().commitSnapshot("sim", 0, 1);
                p.push(img1, new ImageRef("sim", 1, 0), Progress.NONE);
                p.repository().commitSnapshot("sim", 1, 1);
            }
            int before = count(s, PackKeys.PACKS);
            assertTrue(before >= 20, "24 MiB of random bytes in packs of 1 MiB: " + before);
            FerryProcess.Result pruned = FerryProcess.run(cli.store("prune", "--job", "sim", "--keep-last", "1"));
            assertEquals(0, pruned.exit(), pruned.out() + pruned.err());

            StoreCommands.Killed gc = cli.gcKilledAfter(s, 3);
            int aside = count(s, FOSSILS);
            int left = count(s, PackKeys.PACKS);
            assertTrue(gc.running(), "gc ended before it was killed: " + gc.said());
            assertTrue(aside > 0 && left > 1, "killed midway: " + aside + " aside, " + left + " left of " + before);
            System.err.println(kind + ": gc killed with " + aside + " packs moved aside, " + left + " of " + before
                    + " left");

            Path out = tmp.resolve(kind + "-pulled");
            cli.verifyAndPull(out);
            assertEquals(-1, Files.mismatch(img1.resolve("kept"), out.resolve("kept")));

            StringBuilder runs = new StringBuilder();
            // The killed run's work, finished by the next runs: at most three (the first repacks and moves aside,
            // the second deletes; a third, once nothing is left aside, only found nothing to do).
            for (int i = 0; i < 3 && (i == 0 || count(s, FOSSILS) > 0
                    || count(s, PackKeys.PACKS) >= before / 4); i++) {
                FerryProcess.Result again = FerryProcess.run(cli.store("gc", "--grace", "0s"));
                assertEquals(0, again.exit(), again.out() + again.err());
                runs.append(again.out());
            }
            assertEquals(0, count(s, FOSSILS), runs + "left aside: " + s.list(FOSSILS));
            assertTrue(count(s, PackKeys.PACKS) < before / 4,
                    runs + "packs left: " + count(s, PackKeys.PACKS) + " of " + before);
            Path out2 = tmp.resolve(kind + "-pulled2");
            cli.verifyAndPull(out2);
            assertEquals(-1, Files.mismatch(img1.resolve("kept"), out2.resolve("kept")));
            assertEquals("rewritten", Files.readString(out2.resolve("big")));
        }
    }

    /**
     * The store's gc lease (the Store SPI has no create-if-absent; see GcLease): four gc runs
     * racing for it at once, each on its own thread and keeping what it won until all have
     * answered: exactly one holds it, the others are refused naming a holder; and a lease whose
     * holder stopped renewing is taken over by a gc once it has expired, not before.
     */
    @ParameterizedTest
    @ValueSource(strings = {"file", "hdfs", "s3"})
    void oneGcAtATimeAndAnExpiredLeaseIsTakenOver(String kind) throws Exception {
        GcLease.Holder me = GcLease.Holder.current();
        Duration length = Duration.ofMinutes(1);
        try (Store s = open(kind); StagingPipeline p = pipeline(s)) {
            ExecutorService pool = Executors.newFixedThreadPool(4);
            CountDownLatch go = new CountDownLatch(1);
            List<Future<GcLease>> tries = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                GcLease.Holder h = new GcLease.Holder("gc" + i, me.host(), me.pid());
                tries.add(pool.submit(() -> {
                    go.await();
                    return GcLease.acquire(s, h, length, Clock.systemUTC());
                }));
            }
            go.countDown();
            List<GcLease> won = new ArrayList<>();
            List<String> refused = new ArrayList<>();
            for (Future<GcLease> f : tries) {
                try {
                    won.add(f.get());
                } catch (ExecutionException e) {
                    GcLease.HeldException held = (GcLease.HeldException) e.getCause();
                    assertTrue(held.getMessage().contains(held.holder().toString()), held.getMessage());
                    refused.add(held.holder().user());
                }
            }
            pool.shutdown();
            assertEquals(1, won.size(), kind + ": one gc holds the lease; the others were refused naming " + refused);
            assertEquals(3, refused.size());
            won.get(0).close();

            Instant t0 = Instant.parse("2026-11-23T10:00:00Z");
            GcLease crashed = GcLease.acquire(s,
                    new GcLease.Holder("crashed", "elsewhere", 1), length,
                    Clock.fixed(t0, ZoneOffset.UTC));
            GcLease.HeldException early = assertThrows(GcLease.HeldException.class,
                    () -> StoreGc.run(p.repository(), Duration.ofHours(1),
                            Clock.fixed(t0.plusSeconds(59), ZoneOffset.UTC), false, 0, me, length));
            assertTrue(early.getMessage().contains("crashed@elsewhere (pid 1)")
                    && early.getMessage().contains("2026-11-23T10:01:00Z"), early.getMessage());
            StoreGc.run(p.repository(), Duration.ofHours(1),
                    Clock.fixed(t0.plusSeconds(60), ZoneOffset.UTC), false, 0, me, length);
            assertEquals(List.of(), s.list("ferry/v1/gc/lease/"), "taken over, then released at the run's end");
            assertThrows(IOException.class, crashed::renew);
            crashed.close();
        }
    }
}
