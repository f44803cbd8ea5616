package io.ferry.cli;

import io.ferry.model.ImageRef;
import io.ferry.staging.Progress;
import io.ferry.staging.Staging;
import io.ferry.staging.StagingConfig;
import io.ferry.staging.StagingPipeline;
import io.ferry.stores.Store;
import io.ferry.stores.Stores;
import io.ferry.stores.hdfs.MiniHdfs;
import io.ferry.stores.s3.S3ProxyServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * `ferry store gc` SIGKILLed while it repacks, on HDFS (MiniDFSCluster) and S3 (s3proxy), as
 * {@link StoreGcIT} does it on POSIX: the store still verifies and the kept generation pulls, and the
 * next runs finish the work. On these stores a move aside is a copy and a delete (S3) or a rename
 * (HDFS), and the test's own store client watches for the first moves to kill the command among them.
 */
class GcKilledOnRemoteStoresIT {
    @TempDir
    static Path tmp;
    static MiniHdfs hdfs;
    static S3ProxyServer s3;

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

    private static String uri(String kind) {
        return kind.equals("hdfs") ? hdfs.uri("/gc-killed").toString() : "s3://ferry/gc-killed";
    }

    private static Map<String, String> options(String kind) {
        return kind.equals("hdfs") ? Map.of() : s3.options();
    }

    /** {@code ferry store ARGS... URI --set ...}: the store command with this store's options. */
    private static String[] store(String kind, String... args) {
        List<String> cmd = new ArrayList<>(List.of("store"));
        cmd.add(args[0]);
        cmd.add(uri(kind));
        cmd.addAll(List.of(args).subList(1, args.length));
        options(kind).forEach((k, v) -> cmd.addAll(List.of("--set", k + "=" + v)));
        return cmd.toArray(String[]::new);
    }

    private static String[] withStore(String kind, String... args) {
        List<String> cmd = new ArrayList<>(List.of(args));
        cmd.addAll(List.of("--store", uri(kind)));
        options(kind).forEach((k, v) -> cmd.addAll(List.of("--set", k + "=" + v)));
        return cmd.toArray(String[]::new);
    }

    private static int count(Store s, String prefix) throws Exception {
        return s.list(prefix).size();
    }

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
        Map<String, String> packs = Map.of("staging.layout", "packs", "staging.blob-size", "16KiB", "staging.pack-size", "1MiB");
        try (Store s = Stores.open(URI.create(uri(kind)), options(kind))) {
            try (StagingPipeline p = Staging.pipeline(s, StagingConfig.from(packs), Clock.systemUTC())) {
                p.push(img0, new ImageRef("sim", 0, 0), Progress.NONE);
                p.repository().commitSnapshot("sim", 0, 1);
                p.push(img1, new ImageRef("sim", 1, 0), Progress.NONE);
                p.repository().commitSnapshot("sim", 1, 1);
            }
            int before = count(s, "ferry/v2/packs/");
            assertTrue(before >= 20, "24 MiB of random bytes in packs of 1 MiB: " + before);
            FerryProcess.Result pruned = FerryProcess.run(store(kind, "prune", "--job", "sim", "--keep-last", "1"));
            assertEquals(0, pruned.exit(), pruned.out() + pruned.err());

            Process gc = FerryProcess.builder(List.of("-Xmx256m"), store(kind, "gc", "--grace", "0s"))
                    .redirectErrorStream(true).start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (count(s, "ferry/v1/fossils/") < 3 && gc.isAlive() && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            boolean running = gc.isAlive();
            gc.toHandle().destroyForcibly(); // SIGKILL, among the moves
            gc.waitFor();
            String said = new String(gc.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            int aside = count(s, "ferry/v1/fossils/");
            int left = count(s, "ferry/v2/packs/");
            assertTrue(running, "gc ended before it was killed: " + said);
            assertTrue(aside > 0 && left > 1, "killed midway: " + aside + " aside, " + left + " left of " + before);
            System.err.println(kind + ": gc killed with " + aside + " packs moved aside, " + left + " of " + before + " left");

            FerryProcess.Result verify = FerryProcess.run(store(kind, "verify"));
            assertEquals(0, verify.exit(), verify.out() + verify.err());
            Path out = tmp.resolve(kind + "-pulled");
            FerryProcess.Result pull = FerryProcess.run(withStore(kind, "image", "pull", "--job", "sim", "--generation", "1",
                    "--rank", "0", out.toString()));
            assertEquals(0, pull.exit(), pull.out() + pull.err());
            assertEquals(-1, Files.mismatch(img1.resolve("kept"), out.resolve("kept")));

            StringBuilder runs = new StringBuilder();
            for (int i = 0; i < 3; i++) { // the killed run's work, finished by the next runs
                FerryProcess.Result again = FerryProcess.run(store(kind, "gc", "--grace", "0s"));
                assertEquals(0, again.exit(), again.out() + again.err());
                runs.append(again.out());
            }
            assertEquals(0, count(s, "ferry/v1/fossils/"), runs + "left aside: " + s.list("ferry/v1/fossils/"));
            assertTrue(count(s, "ferry/v2/packs/") < before / 4, runs + "packs left: " + count(s, "ferry/v2/packs/")
                    + " of " + before);
            verify = FerryProcess.run(store(kind, "verify"));
            assertEquals(0, verify.exit(), verify.out() + verify.err());
            Path out2 = tmp.resolve(kind + "-pulled2");
            pull = FerryProcess.run(withStore(kind, "image", "pull", "--job", "sim", "--generation", "1", "--rank", "0",
                    out2.toString()));
            assertEquals(0, pull.exit(), pull.out() + pull.err());
            assertEquals(-1, Files.mismatch(img1.resolve("kept"), out2.resolve("kept")));
            assertEquals("rewritten", Files.readString(out2.resolve("big")));
        }
    }
}
