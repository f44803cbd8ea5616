package io.ferry.cli;

import io.ferry.model.ImageRef;
import io.ferry.staging.GcLease;
import io.ferry.staging.Progress;
import io.ferry.staging.Staging;
import io.ferry.staging.StagingConfig;
import io.ferry.staging.StagingPipeline;
import io.ferry.staging.StoreGc;
import io.ferry.staging.packs.PackKeys;
import io.ferry.stores.Store;
import io.ferry.stores.Stores;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static io.ferry.cli.ChunkedImages.pipeline;
import static io.ferry.cli.StoreCommands.FOSSILS;
import static io.ferry.cli.StoreCommands.count;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Store gc at the repository level on HDFS (MiniDFSCluster) and S3 (s3proxy), and its lease on
 * {@code file:} too: `ferry store gc` SIGKILLed midway (on POSIX that is {@link StoreGcIT}'s), and
 * one gc at a time. Round trips, damage, and prune and gc beside a push are
 * {@link RepositoryOnEveryStoreIT}'s.
 */
class StoreGcOnEveryStoreIT {
    @TempDir
    static Path tmp;
    static EveryStore stores;

    @BeforeAll
    static void start() throws Exception {
        stores = new EveryStore(tmp);
    }

    @AfterAll
    static void stop() throws Exception {
        stores.close();
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
        StoreCommands cli = kind.equals("hdfs") ? new StoreCommands(stores.hdfs.uri("/gc-killed").toString(), Map.of())
                : new StoreCommands("s3://ferry/gc-killed", stores.s3.options());
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
        try (Store s = stores.open(kind); StagingPipeline p = pipeline(s)) {
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
