package io.ferry.benchmarks;

import io.ferry.agent.RestartSource;
import io.ferry.agent.peer.PeerServer;
import io.ferry.model.PeerAddresses;
import io.ferry.cli.SyntheticImage;
import io.ferry.model.ImageRef;
import io.ferry.model.Sizes;
import io.ferry.staging.LocalCache;
import io.ferry.staging.Progress;
import io.ferry.staging.Staging;
import io.ferry.staging.StagingConfig;
import io.ferry.staging.StagingPipeline;
import io.ferry.staging.internal.FileTrees;
import io.ferry.stores.Store;
import io.ferry.stores.Stores;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Restart from the node-local cache: a rank's image (seeded, realistic: {@link SyntheticImage})
 * sits in the cache ({@link LocalCache}), its manifest in a {@code file:} store, and the
 * agent's real path ({@link RestartSource#materialise}: reads the committed manifest, checks
 * every cached file against it, SHA-256 and size, nothing missing or extra, and copies the
 * image into the rank's restart directory) is timed against {@code cat} of the same files into
 * a directory on the same file system, the least any restart could do. Neither fsyncs.
 * Alternating, each twice: "cold" (the cached image's pages dropped from the page cache first,
 * {@code dd iflag=nocache count=0} per file) and "warm" (the image just read). Between runs the
 * previous copy is deleted and {@code sync} run, outside the timing.
 *
 * <p>Usage: {@code RestartBenchmark [SIZE] [WORK_DIR] [ROUNDS]} (default 4GiB, a temp dir, 2).
 */
public final class RestartBenchmark {
    private RestartBenchmark() {}

    public static void main(String[] args) throws Exception {
        long size = Sizes.parse(args.length > 0 ? args[0] : "4GiB");
        Path work = args.length > 1 ? Path.of(args[1]) : Files.createTempDirectory("ferry-restart");
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 2;
        Files.createDirectories(work);
        LocalCache cache = Staging.localCache(work.resolve("cache"));
        ImageRef ref = new ImageRef("restart", 1, 0);
        Path image = cache.imageDir(ref);
        System.out.printf("generating a %s seeded image in %s%n", Sizes.format(size), image);
        SyntheticImage.write(image, size, 42, 0);
        try (Store store = Stores.open(work.resolve("store").toUri(), Map.of());
             StagingPipeline pipeline = Staging.pipeline(store, StagingConfig.defaults(), Clock.systemUTC())) {
            long t = System.nanoTime();
            cache.markStaged(ref, pipeline.push(image, ref, Progress.NONE)); // as the agent does
            pipeline.repository().commitSnapshot(ref.job(), ref.generation(), 1); // a restart needs the commit
            System.out.printf("staged to %s in %.1f s (its manifest is what the restart verifies against)%n",
                    store.uri(), (System.nanoTime() - t) / 1e9);
            List<Path> files;
            try (Stream<Path> s = Files.list(image)) {
                files = s.filter(Files::isRegularFile).sorted().toList();
            }
            Path dest = work.resolve("restart");
            List<double[]> ferry = new ArrayList<>();
            List<double[]> cat = new ArrayList<>();
            for (int round = 0; round < rounds; round++) {
                for (boolean ferryFirst : new boolean[]{round % 2 == 0, round % 2 != 0}) {
                    double[] times = new double[2]; // cold, warm
                    for (int warm = 0; warm < 2; warm++) {
                        reset(dest);
                        if (warm == 0) {
                            dropCache(files);
                        }
                        long t0 = System.nanoTime();
                        if (ferryFirst) {
                            String tier = RestartSource.materialise(pipeline, cache, ref, dest);
                            if (!tier.equals("local")) {
                                throw new IllegalStateException("restart used tier " + tier + ", not the cache");
                            }
                        } else {
                            run(List.of("bash", "-c",
                                    "mkdir -p \"$2\" && cd \"$1\" && for f in *; do cat \"$f\" > \"$2/$f\"; done",
                                    "_", image.toString(), dest.toString()));
                        }
                        times[warm] = (System.nanoTime() - t0) / 1e9;
                    }
                    (ferryFirst ? ferry : cat).add(times);
                    System.out.printf("round %d %-6s cold %.2f s (%.0f MB/s), warm %.2f s (%.0f MB/s)%n", round,
                            ferryFirst ? "ferry" : "cat", times[0], size / times[0] / 1e6, times[1],
                            size / times[1] / 1e6);
                }
            }
            // From a partner: the image in another node's cache, served by its agent's peer server on loopback,
            // fetched into this (empty) node's cache and verified against the manifest (RestartSource, peers).
            List<double[]> partner = new ArrayList<>();
            LocalCache elsewhere = Staging.localCache(work.resolve("other-node-cache"));
            try (PeerServer peer = new PeerServer(new InetSocketAddress("127.0.0.1", 0), cache)) {
                List<PeerAddresses.Peer> peers = PeerAddresses.parse("n0=" + peer.address());
                for (int round = 0; round < rounds; round++) {
                    double[] times = new double[2];
                    for (int warm = 0; warm < 2; warm++) {
                        reset(dest);
                        if (warm == 0) {
                            dropCache(files);
                        }
                        long t0 = System.nanoTime();
                        String tier = RestartSource.materialise(pipeline, elsewhere, ref, dest,
                                RestartSource.Sources.none().peers(peers));
                        if (!tier.equals("partner")) {
                            throw new IllegalStateException("restart used tier " + tier + ", not the partner");
                        }
                        times[warm] = (System.nanoTime() - t0) / 1e9;
                    }
                    partner.add(times);
                    System.out.printf("round %d %-6s cold %.2f s (%.0f MB/s), warm %.2f s (%.0f MB/s)%n", round,
                            "partner", times[0], size / times[0] / 1e6, times[1], size / times[1] / 1e6);
                }
            }
            reset(dest);
            double ferryCold = best(ferry, 0);
            double ferryWarm = best(ferry, 1);
            double catCold = best(cat, 0);
            double catWarm = best(cat, 1);
            System.out.printf("%nRestart from the local cache, %s image, best of %d, %d cores, load %s%n",
                    Sizes.format(size), rounds, Runtime.getRuntime().availableProcessors(), Machine.loadAverage());
            System.out.printf("%-34s %10s %10s%n", "", "cold s", "warm s");
            System.out.printf("%-34s %10.2f %10.2f%n", "ferry (verify + copy, materialise)", ferryCold, ferryWarm);
            System.out.printf("%-34s %10.2f %10.2f%n", "ferry from a partner (loopback TCP)", best(partner, 0),
                    best(partner, 1));
            System.out.printf("%-34s %10.2f %10.2f%n", "cat > file (same files, same fs)", catCold, catWarm);
            System.out.printf("%-34s %10.2f %10.2f   (goal: within 1.2x)%n", "ratio ferry / cat", ferryCold / catCold,
                    ferryWarm / catWarm);
            System.out.printf("%-34s %10.2f %10.2f%n", "ratio partner / cat", best(partner, 0) / catCold,
                    best(partner, 1) / catWarm);
            System.out.printf("RESULT size=%d ferry_cold_s=%.3f ferry_warm_s=%.3f cat_cold_s=%.3f cat_warm_s=%.3f"
                    + " ratio_cold=%.2f ratio_warm=%.2f partner_cold_s=%.3f partner_warm_s=%.3f%n", size, ferryCold,
                    ferryWarm, catCold, catWarm, ferryCold / catCold, ferryWarm / catWarm, best(partner, 0),
                    best(partner, 1));
        }
        FileTrees.delete(work);
    }

    private static double best(List<double[]> runs, int i) {
        return runs.stream().mapToDouble(r -> r[i]).min().orElse(Double.NaN);
    }

    private static void reset(Path dest) throws Exception {
        FileTrees.delete(dest);
        run(List.of("sync"));
    }

    /** Drops the files' clean pages from the page cache (POSIX_FADV_DONTNEED through GNU dd). */
    private static void dropCache(List<Path> files) throws Exception {
        for (Path f : files) {
            run(List.of("dd", "if=" + f, "iflag=nocache", "count=0", "status=none"));
        }
    }

    private static void run(List<String> cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).inheritIO().start();
        if (p.waitFor() != 0) {
            throw new IllegalStateException(cmd + " exited with " + p.exitValue());
        }
    }
}
