package io.ferry.benchmarks;

import io.ferry.cli.SyntheticImage;
import io.ferry.model.ImageRef;
import io.ferry.model.Sizes;
import io.ferry.staging.Progress;
import io.ferry.staging.PushResult;
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
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

/**
 * What the ranks of one node cost on the store when they share their program's code (issue 14,
 * cross-rank deduplication): RANKS seeded realistic images ({@link SyntheticImage}, one seed per
 * rank, so heap, fields and random bytes differ and the machine code copied from the system's
 * libraries is the same), pushed one after another through one pipeline, as one node's agent
 * pushes its ranks of a generation: with the default lookups (the rank's own history and the
 * ranks its node pushed), with `staging.dedup-generations=0` (no lookups), and against
 * {@code zstd -1 -T0} on each file. Same images, same disk, one run.
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
        System.out.println("| push | stored, all ranks | stored per rank (first, then the mean of the others) | of raw |");
        System.out.println("|---|---:|---:|---:|");
        for (String lookups : new String[]{"2", "0"}) {
            Path storeDir = work.resolve("store-" + lookups);
            long first = 0;
            long total = 0;
            try (Store store = Stores.open(storeDir.toUri(), Map.of());
                 StagingPipeline p = Staging.pipeline(store, StagingConfig.from(Map.of("staging.dedup-generations", lookups)),
                         Clock.systemUTC())) {
                for (int r = 0; r < ranks; r++) {
                    PushResult pushed = p.push(work.resolve("rank-" + r), new ImageRef("bench", 0, r), Progress.NONE);
                    if (r == 0) {
                        first = pushed.storedBytes();
                    }
                    total += pushed.storedBytes();
                }
            }
            row(lookups.equals("0") ? "Ferry, no lookups (`staging.dedup-generations=0`)"
                    : "**Ferry** (default: the rank's history and its node's other ranks)", total, first, ranks, size);
            FileTrees.delete(storeDir);
        }
        Path zout = Files.createDirectories(work.resolve("zstd"));
        long first = 0;
        long total = 0;
        for (int r = 0; r < ranks; r++) {
            Path out = Files.createDirectories(zout.resolve("rank-" + r));
            sh("cd " + work.resolve("rank-" + r) + " && for f in *; do zstd -1 -T0 -q \"$f\" -o \"" + out + "/$f.zst\"; done");
            long n = du(out);
            if (r == 0) {
                first = n;
            }
            total += n;
        }
        row("`zstd -1 -T0` on each file", total, first, ranks, size);
        FileTrees.delete(work);
    }

    private static void row(String name, long total, long first, int ranks, long size) {
        System.out.printf(Locale.ROOT, "| %s | %s | %s, then %s | %.1f%% |%n", name, Sizes.format(total), Sizes.format(first),
                ranks > 1 ? Sizes.format((total - first) / (ranks - 1)) : "-", 100.0 * total / (size * ranks));
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
