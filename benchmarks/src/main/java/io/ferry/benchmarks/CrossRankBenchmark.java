package io.ferry.benchmarks;

import io.ferry.cli.SyntheticImage;
import io.ferry.model.ImageRef;
import io.ferry.model.Sizes;
import io.ferry.staging.Progress;
import io.ferry.staging.PullImage;
import io.ferry.staging.PullResult;
import io.ferry.staging.PushImage;
import io.ferry.staging.PushResult;
import io.ferry.staging.packs.PackKeys;
import io.ferry.staging.Staging;
import io.ferry.staging.StagingConfig;
import io.ferry.staging.StagingPipeline;
import io.ferry.staging.internal.FileTrees;
import io.ferry.stores.Store;
import io.ferry.stores.Stores;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

/**
 * What the ranks of one node cost on the store when they share their program's code (issue 14,
 * cross-rank deduplication): RANKS seeded realistic images ({@link SyntheticImage}, one seed per
 * rank, so heap, fields and random bytes differ and the machine code copied from the system's
 * libraries is the same), pushed one after another through one pipeline, as one node's agent
 * pushes its ranks of a generation: together in one push ({@code pushAll}: shared packs, as the
 * agent pushes them), one after another (as the agent did before), one after another without
 * lookups ({@code staging.dedup-generations=0}: no cross-rank dedup at all), and against
 * {@code zstd -1 -T0} on each file followed by {@code sync}. Every push is durable. Same images,
 * same disk, one run; throwaway pushes first warm the JIT up, and the Ferry rows are taken in
 * turns, three rounds, the median shown. Then the node's restart from the store: its ranks pulled
 * together and one after another, beside {@code zstd -d}.
 *
 * <p>Usage: {@code CrossRankBenchmark [SIZE_PER_RANK] [RANKS] [WORK_DIR]} (default 256MiB, 4).
 */
public final class CrossRankBenchmark {
    private CrossRankBenchmark() {}

    public static void main(String[] args) throws Exception {
        long size = args.length > 0 ? Sizes.parse(args[0]) : 256L << 20;
        int ranks = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        Path work = Path.of(args.length > 2 ? args[2] : "bench-crossrank").toAbsolutePath();
        FileTrees.delete(work);
        for (int r = 0; r < ranks; r++) {
            SyntheticImage.write(work.resolve("rank-" + r), size, 1000 + r, 0);
        }
        System.out.printf(Locale.ROOT, "%d ranks of %s each, %d cores%n%n", ranks, Sizes.format(size),
                Runtime.getRuntime().availableProcessors());
        sh("sync"); // the images just written are on the disk before anything is timed
        warmUp(work, ranks, size);
        System.out.println("| push | seconds, all ranks (median of " + ROUNDS + ") | MB/s | stored, all ranks | of raw"
                + " | pack objects | each rank's pull reads, of its records |");
        System.out.println("|---|---:|---:|---:|---:|---:|---:|");
        String[] names = {"**Ferry** (default: the node's ranks pushed together, with lookups)",
                "Ferry, ranks pushed one after another, with lookups (before 2026-11-24)",
                "Ferry, one after another, no lookups (`staging.dedup-generations=0`): no cross-rank dedup"};
        String[] lookups = {"2", "2", "0"};
        boolean[] together = {true, false, false};
        Row[][] rounds = new Row[names.length][ROUNDS];
        for (int round = 0; round < ROUNDS; round++) { // in turns, so that a slow minute of the machine hits every row
            for (int i = 0; i < names.length; i++) {
                rounds[i][round] = ferry(work, ranks, lookups[i], together[i], round == ROUNDS - 1);
            }
        }
        for (int i = 0; i < names.length; i++) {
            Row[] r = rounds[i].clone();
            Arrays.sort(r, Comparator.comparingDouble(Row::seconds));
            Row median = r[ROUNDS / 2];
            row(names[i], median.seconds(), median.stored(), ranks, size, median.packs(),
                    rounds[i][ROUNDS - 1].readShare());
        }
        Path zout = Files.createDirectories(work.resolve("zstd"));
        sh("sync"); // so that zstd's closing sync flushes only what zstd wrote
        long t0 = System.nanoTime();
        for (int r = 0; r < ranks; r++) {
            Path out = Files.createDirectories(zout.resolve("rank-" + r));
            sh("cd " + work.resolve("rank-" + r) + " && for f in *; do zstd -1 -T0 -q \"$f\" -o \"" + out
                    + "/$f.zst\"; done");
        }
        sh("sync");
        double seconds = (System.nanoTime() - t0) / 1e9;
        row("`zstd -1 -T0` on each file, then `sync`", seconds, du(zout), ranks, size, -1, Double.NaN);
        restore(work, ranks, size, zout);
        FileTrees.delete(work);
    }

    /**
     * The node's restart from the store: every rank's image of a store its ranks were pushed to
     * together, pulled one after another (as the agent did before 2026-11-24) and together
     * ({@code pullAll}, as it does now), rounds in turns, the median shown; beside {@code zstd -d}
     * of each file, then {@code sync}. Every pull ends durable.
     */
    private static void restore(Path work, int ranks, long size, Path zout) throws IOException, InterruptedException {
        Path storeDir = work.resolve("store-restore");
        try (Store store = Stores.open(storeDir.toUri(), Map.of());
             StagingPipeline p = Staging.pipeline(store, StagingConfig.from(Map.of()), Clock.systemUTC())) {
            List<PushImage> images = new ArrayList<>();
            for (int r = 0; r < ranks; r++) {
                images.add(new PushImage(work.resolve("rank-" + r), new ImageRef("bench", 0, r)));
            }
            p.pushAll(images, Progress.NONE, (image, pushed) -> { });
            long packs = 0;
            for (String key : store.list(PackKeys.PACKS)) {
                packs += store.size(key);
            }
            p.pull(images.get(0).ref(), work.resolve("restore-warm-up"), Progress.NONE); // the pull's code compiled
            FileTrees.delete(work.resolve("restore-warm-up"));
            double[][] seconds = new double[2][ROUNDS];
            long[] read = new long[2];
            for (int round = 0; round < ROUNDS; round++) {
                for (int way = 0; way < 2; way++) {
                    Path out = work.resolve("restored");
                    FileTrees.delete(out);
                    sh("sync");
                    long t0 = System.nanoTime();
                    List<PullResult> pulled = new ArrayList<>();
                    if (way == 0) {
                        pulled.addAll(p.pullAll(images.stream().map(i -> new PullImage(i.ref(),
                                out.resolve(Integer.toString(i.ref().rank())))).toList(), Progress.NONE));
                    } else {
                        for (PushImage i : images) {
                            pulled.add(p.pull(i.ref(), out.resolve(Integer.toString(i.ref().rank())), Progress.NONE));
                        }
                    }
                    seconds[way][round] = (System.nanoTime() - t0) / 1e9;
                    read[way] = pulled.stream().mapToLong(PullResult::readBytes).sum();
                }
            }
            FileTrees.delete(work.resolve("restored"));
            Path zin = Files.createDirectories(work.resolve("zstd-restored"));
            sh("sync");
            long t0 = System.nanoTime();
            sh("cd " + zout + " && for r in *; do mkdir -p \"" + zin + "/$r\" && for f in \"$r\"/*.zst; do"
                    + " zstd -d -q \"$f\" -o \"" + zin + "/${f%.zst}\"; done; done && sync");
            double zstd = (System.nanoTime() - t0) / 1e9;
            System.out.println();
            System.out.println("| restore of the node's " + ranks + " ranks | seconds (median of " + ROUNDS + ") | MB/s"
                    + " | read from the store | of the packs |");
            System.out.println("|---|---:|---:|---:|---:|");
            String[] names = {"**Ferry**, the node's ranks pulled together (`pullAll`, as a restart does)",
                    "Ferry, ranks pulled one after another (a restart before 2026-11-24)"};
            for (int way = 0; way < 2; way++) {
                double[] sorted = seconds[way].clone();
                Arrays.sort(sorted);
                System.out.printf(Locale.ROOT, "| %s | %.2f | %.0f | %s | %.2fx |%n", names[way], sorted[ROUNDS / 2],
                        size * ranks / 1e6 / sorted[ROUNDS / 2], Sizes.format(read[way]), (double) read[way] / packs);
            }
            System.out.printf(Locale.ROOT, "| `zstd -d` of each file, then `sync` | %.2f | %.0f | %s | - |%n", zstd,
                    size * ranks / 1e6 / zstd, Sizes.format(du(zout)));
        } finally {
            FileTrees.delete(storeDir);
        }
    }

    /** Rounds of each Ferry row, taken in turns; the median's time is shown. */
    private static final int ROUNDS = 3;

    /**
     * @param readShare bytes every rank's pull read from the store over the bytes of the records it needed
     *                  (NaN: not pulled)
     */
    private record Row(double seconds, long stored, int packs, double readShare) {}

    /** Throwaway pushes of at least 256 MiB first, so that no timed row pays for the JIT compiling the hot loops. */
    private static void warmUp(Path work, int ranks, long size) throws IOException {
        Path storeDir = work.resolve("store-warm-up");
        try (Store store = Stores.open(storeDir.toUri(), Map.of());
             StagingPipeline p = Staging.pipeline(store, StagingConfig.from(Map.of()), Clock.systemUTC())) {
            for (long pushed = 0, g = 0; pushed < 256L << 20; g++) {
                for (int r = 0; r < ranks; r++, pushed += size) {
                    p.push(work.resolve("rank-" + r), new ImageRef("warm-up-" + g, 0, r), Progress.NONE);
                }
            }
        }
        FileTrees.delete(storeDir);
    }

    /**
     * Pushes every rank as generation 0 of a fresh store, together ({@code pushAll}) or one by
     * one; with {@code pull}, then pulls each rank back (untimed) to see what its pull reads.
     */
    private static Row ferry(Path work, int ranks, String lookups, boolean together, boolean pull) throws IOException {
        Path storeDir = work.resolve("store-" + lookups + together);
        try (Store store = Stores.open(storeDir.toUri(), Map.of());
             StagingPipeline p = Staging.pipeline(store,
                     StagingConfig.from(Map.of("staging.dedup-generations", lookups)), Clock.systemUTC())) {
            List<PushImage> images = new ArrayList<>();
            for (int r = 0; r < ranks; r++) {
                images.add(new PushImage(work.resolve("rank-" + r), new ImageRef("bench", 0, r)));
            }
            List<PushResult> results = new ArrayList<>();
            long t0 = System.nanoTime();
            if (together) {
                p.pushAll(images, Progress.NONE, (image, pushed) -> results.add(pushed));
            } else {
                for (PushImage i : images) {
                    results.add(p.push(i.dir(), i.ref(), Progress.NONE));
                }
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            double readShare = Double.NaN;
            if (pull) {
                long read = 0;
                long needed = 0;
                for (PushImage i : images) {
                    Path out = work.resolve("pulled");
                    PullResult r = p.pull(i.ref(), out, Progress.NONE);
                    read += r.readBytes();
                    needed += r.fetchedBytes();
                    FileTrees.delete(out);
                }
                readShare = (double) read / needed;
            }
            return new Row(seconds, results.stream().mapToLong(PushResult::storedBytes).sum(),
                    store.list(PackKeys.PACKS).size(), readShare);
        } finally {
            FileTrees.delete(storeDir);
        }
    }

    private static void row(String name, double seconds, long stored, int ranks, long size, int packs,
                            double readShare) {
        System.out.printf(Locale.ROOT, "| %s | %.2f | %.0f | %s | %.1f%% | %s | %s |%n", name, seconds,
                size * ranks / 1e6 / seconds, Sizes.format(stored), 100.0 * stored / (size * ranks),
                packs < 0 ? "-" : String.valueOf(packs),
                Double.isNaN(readShare) ? "-" : String.format(Locale.ROOT, "%.2fx", readShare));
    }

    private static void sh(String cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("bash", "-c", cmd).inheritIO().start();
        if (p.waitFor() != 0) {
            throw new IOException("command failed: " + cmd);
        }
    }

    private static long du(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile).mapToLong(f -> f.toFile().length()).sum();
        }
    }
}
