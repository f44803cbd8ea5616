package io.ferry.benchmarks;

import io.ferry.cli.SyntheticImage;
import io.ferry.model.ImageRef;
import io.ferry.model.Sizes;
import io.ferry.staging.Progress;
import io.ferry.staging.PullResult;
import io.ferry.staging.PushResult;
import io.ferry.staging.Staging;
import io.ferry.staging.StagingConfig;
import io.ferry.staging.StagingPipeline;
import io.ferry.staging.internal.FileTrees;
import io.ferry.stores.Store;
import io.ferry.stores.Stores;
import io.ferry.stores.hdfs.HdfsStore;
import io.ferry.stores.hdfs.MiniHdfs;
import io.ferry.stores.s3.S3ProxyServer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3AsyncClient;
import software.amazon.awssdk.transfer.s3.S3TransferManager;
import software.amazon.awssdk.transfer.s3.model.CompletedDirectoryDownload;
import software.amazon.awssdk.transfer.s3.model.CompletedDirectoryUpload;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Push and pull of the realistic image to HDFS (a MiniDFSCluster) and S3 (s3proxy), on loopback,
 * in one run: Ferry against what a user would do without it, {@code FileSystem.copyFromLocalFile}
 * / {@code copyToLocalFile} of the raw image for HDFS and the AWS SDK transfer manager's
 * directory upload / download for S3. Reports raw-image MB/s and the bytes each sent, with
 * ratios. The store servers run in this JVM on the same two cores as the client: absolute
 * figures are low; the ratios are the point.
 */
public final class RemoteStoreBenchmark {
    private record Row(String link, String store, String tool, double pushSeconds, long bytesSent, double pullSeconds,
                       long objects) {}

    private RemoteStoreBenchmark() {}

    public static void main(String[] args) throws Exception {
        long size = Sizes.parse(args.length > 0 ? args[0] : "1GiB");
        Path work = Path.of(args.length > 1 ? args[1] : "bench-work").toAbsolutePath();
        FileTrees.delete(work);
        Path image = work.resolve("image");
        System.err.printf("generating a %s seeded image in %s%n", Sizes.format(size), image);
        SyntheticImage.write(image, size, 42, 0);

        String rate = args.length > 2 ? args[2] : "1gbit";
        List<Row> rows = new ArrayList<>();
        for (String link : List.of("loopback", rate)) {
            boolean shaped = !link.equals("loopback");
            if (shaped && !shape(rate)) {
                continue;
            }
            try {
                rows.addAll(runAll(link, image, work, size));
            } finally {
                if (shaped) {
                    tc("qdisc", "del", "dev", "lo", "root");
                }
            }
        }

        System.out.printf(Locale.ROOT, "%nImage: %s (%d bytes, seed 42: 15%% code, 40%% heap pages with zeros,"
                + " 30%% float fields, 15%% random), %d cores, store servers in the same JVM on loopback%n%n",
                Sizes.format(size), size, Runtime.getRuntime().availableProcessors());
        System.out.println("| link | store | tool | push MB/s (raw) | bytes sent | objects | pull MB/s (raw)"
                + " | Ferry push speed-up | Ferry pull speed-up | bytes saved |");
        System.out.println("|---|---|---|---:|---:|---:|---:|---:|---:|---:|");
        for (Row r : rows) {
            Row f = rows.stream().filter(x -> x.link().equals(r.link()) && x.store().equals(r.store())).findFirst()
                    .orElseThrow();
            System.out.printf(Locale.ROOT, "| %s | %s | %s | %.0f | %.1f MiB | %d | %.0f | %.2fx | %.2fx | %.2fx |%n",
                    r.link(), r.store(), r.tool(), size / 1e6 / r.pushSeconds(), r.bytesSent() / 1048576.0, r.objects(),
                    size / 1e6 / r.pullSeconds(), r.pushSeconds() / f.pushSeconds(), r.pullSeconds() / f.pullSeconds(),
                    (double) r.bytesSent() / f.bytesSent());
        }
    }

    private static List<Row> runAll(String link, Path image, Path work, long size) throws Exception {
        List<Row> rows = new ArrayList<>();
        try (MiniHdfs hdfs = new MiniHdfs(work.resolve("hdfs"))) {
            rows.add(ferry(link, "HDFS", "**Ferry** (packs: 64 KiB blobs, 32 MiB packs)", hdfs.uri("/ferrypacks"),
                    Map.of(), StagingConfig.defaults(), image, work));
            rows.add(ferry(link, "HDFS", "Ferry, chunk layout (4 MiB chunks)", hdfs.uri("/ferry4"), Map.of(),
                    StagingConfig.from(Map.of(StagingConfig.LAYOUT_PACKS.name(), "chunks")), image, work));
            rows.add(ferry(link, "HDFS", "Ferry, chunk layout, 64 MiB chunks", hdfs.uri("/ferry64"), Map.of(),
                    StagingConfig.from(Map.of(StagingConfig.LAYOUT_PACKS.name(), "chunks",
                            StagingConfig.CHUNK_SIZE.name(), "64MiB")), image, work));
            rows.add(hdfsCopy(link, hdfs.uri("/plain"), image, work, size));
        }
        FileTrees.delete(work.resolve("hdfs"));
        try (S3ProxyServer s3 = new S3ProxyServer(work.resolve("s3"), true).bucket("bench")) {
            rows.add(ferry(link, "S3", "**Ferry** (packs: 64 KiB blobs, 32 MiB packs)",
                    URI.create("s3://bench/ferrypacks"), s3.options(), StagingConfig.defaults(), image, work));
            rows.add(ferry(link, "S3", "Ferry, chunk layout (4 MiB chunks)", URI.create("s3://bench/ferry"),
                    s3.options(), StagingConfig.from(Map.of(StagingConfig.LAYOUT_PACKS.name(), "chunks")),
                    image, work));
            rows.add(transferManager(link, s3, image, work, size));
        }
        FileTrees.delete(work.resolve("s3"));
        return rows;
    }

    /**
     * Shapes loopback to {@code rate} (tc tbf): a node's share of the store's bandwidth when the
     * whole machine checkpoints at once, which is what a remote store gives each node in practice.
     */
    private static boolean shape(String rate) {
        try {
            tc("qdisc", "add", "dev", "lo", "root", "tbf", "rate", rate, "burst", "1mb", "latency", "50ms");
            return true;
        } catch (Exception e) {
            System.err.println("skipping the shaped run: cannot shape loopback with tc (needs root and sch_tbf): "
                    + e.getMessage());
            return false;
        }
    }

    private static void tc(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("tc"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).inheritIO().start();
        if (p.waitFor() != 0) {
            throw new IllegalStateException(String.join(" ", cmd) + " exited " + p.exitValue());
        }
    }

    private static Row ferry(String link, String kind, String tool, URI uri, Map<String, String> storeOptions,
                             StagingConfig config, Path image, Path work) throws Exception {
        try (Store store = Stores.open(uri, storeOptions);
             StagingPipeline p = Staging.pipeline(store, config, Clock.systemUTC())) {
            ImageRef ref = new ImageRef("bench", 0, 0);
            PushResult push = p.push(image, ref, Progress.NONE);
            Path out = work.resolve("ferry-out");
            PullResult pull = p.pull(ref, out, Progress.NONE);
            FileTrees.delete(out);
            long objects = store.list("").size();
            double pushS = push.elapsed().toNanos() / 1e9;
            double pullS = pull.elapsed().toNanos() / 1e9;
            System.err.printf(Locale.ROOT, "%s %s %s: push %.2f s (%d chunks, %s sent), pull %.2f s, %s%n", link, kind,
                    tool, pushS, push.chunks(), Sizes.format(push.storedBytes()), pullS, store.health().summary());
            return new Row(link, kind, tool, pushS, push.storedBytes(), pullS, objects);
        }
    }

    private static Row hdfsCopy(String link, URI dst, Path image, Path work, long size) throws Exception {
        Configuration conf = new Configuration();
        HdfsStore.tuneForManyFiles(conf); // the same client tuning Ferry's store runs with
        try (FileSystem fs = FileSystem.newInstance(dst, conf)) {
            org.apache.hadoop.fs.Path target = new org.apache.hadoop.fs.Path(dst);
            long t0 = System.nanoTime();
            fs.copyFromLocalFile(false, true, new org.apache.hadoop.fs.Path(image.toUri()), target);
            double pushS = (System.nanoTime() - t0) / 1e9;
            Path out = work.resolve("plain-out");
            t0 = System.nanoTime();
            fs.copyToLocalFile(false, target, new org.apache.hadoop.fs.Path(out.toUri()), true);
            double pullS = (System.nanoTime() - t0) / 1e9;
            long objects = 0;
            var it = fs.listFiles(target, true);
            while (it.hasNext()) {
                it.next();
                objects++;
            }
            FileTrees.delete(out);
            System.err.printf(Locale.ROOT, "HDFS copyFromLocalFile: push %.2f s, pull %.2f s%n", pushS, pullS);
            return new Row(link, "HDFS", "`FileSystem.copyFromLocalFile` / `copyToLocalFile`", pushS, size,
                    pullS, objects);
        }
    }

    private static S3AsyncClient asyncClient(S3ProxyServer s3, boolean multipart) {
        return S3AsyncClient.builder()
                .endpointOverride(s3.endpoint())
                .forcePathStyle(true)
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(
                        AwsBasicCredentials.create(S3ProxyServer.ACCESS_KEY, S3ProxyServer.SECRET_KEY)))
                .multipartEnabled(multipart)
                // Integrity as in Ferry's store: no flexible checksums (s3proxy ignores them anyway).
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .build();
    }

    /**
     * Upload with the multipart client (parallel parts, what the transfer manager is for);
     * download with whole-object GETs, since s3proxy cannot serve a part by number.
     */
    private static Row transferManager(String link, S3ProxyServer s3, Path image, Path work, long size)
            throws Exception {
        double pushS;
        try (S3AsyncClient client = asyncClient(s3, true);
             S3TransferManager tm = S3TransferManager.builder().s3Client(client).build()) {
            long t0 = System.nanoTime();
            CompletedDirectoryUpload up = tm.uploadDirectory(r -> r.source(image).bucket("bench").s3Prefix("plain"))
                    .completionFuture().join();
            pushS = (System.nanoTime() - t0) / 1e9;
            if (!up.failedTransfers().isEmpty()) {
                throw new IllegalStateException("transfer manager upload failed: " + up.failedTransfers());
            }
        }
        try (S3AsyncClient client = asyncClient(s3, false);
             S3TransferManager tm = S3TransferManager.builder().s3Client(client).build()) {
            Path out = work.resolve("plain-out");
            Files.createDirectories(out);
            long t0 = System.nanoTime();
            CompletedDirectoryDownload down = tm.downloadDirectory(r -> r.destination(out).bucket("bench")
                    .listObjectsV2RequestTransformer(l -> l.prefix("plain"))).completionFuture().join();
            double pullS = (System.nanoTime() - t0) / 1e9;
            if (!down.failedTransfers().isEmpty()) {
                throw new IllegalStateException("transfer manager download failed: " + down.failedTransfers());
            }
            AtomicLong objects = new AtomicLong();
            client.listObjectsV2Paginator(r -> r.bucket("bench").prefix("plain")).subscribe(
                    page -> objects.addAndGet(page.contents().size())).join();
            FileTrees.delete(out);
            System.err.printf(Locale.ROOT, "S3 transfer manager: push %.2f s, pull %.2f s%n", pushS, pullS);
            return new Row(link, "S3", "AWS SDK `S3TransferManager` upload/download directory", pushS, size, pullS,
                    objects.get());
        }
    }
}
