package io.ferry.benchmarks;

import io.ferry.cli.SyntheticImage;
import io.ferry.model.Sizes;
import io.ferry.staging.internal.FileTrees;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import static io.ferry.benchmarks.Shell.sh;
import static io.ferry.benchmarks.Shell.timed;

/**
 * {@code ferry image push} and {@code pull} typed by hand, each in a new shell, as a user meets
 * them: no daemon is running at first, so the first command starts one (bin/ferry does, and runs
 * that command in a JVM of its own); every later command is served by it. Beside them, in the same
 * rounds, zstd on each file ({@code zstd -1 -T0} to push, {@code zstd -d} to pull, then sync), what
 * a user would type instead. Prints the first command's times and the medians of the later ones,
 * and the ratio zstd / Ferry (above 1: Ferry is faster).
 * Usage: {@code ByHandBenchmark SIZE WORK_DIR [ROUNDS]}.
 */
public final class ByHandBenchmark {
    private ByHandBenchmark() {}

    public static void main(String[] args) throws Exception {
        long size = Sizes.parse(args.length > 0 ? args[0] : "1GiB");
        Path work = Path.of(args.length > 1 ? args[1] : "bench-by-hand").toAbsolutePath();
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        FileTrees.delete(work);
        Path image = work.resolve("image");
        SyntheticImage.write(image, size, 42, 0);
        Path run = Files.createDirectories(work.resolve("run")); // this user's XDG_RUNTIME_DIR: no daemon yet
        String ferry = "env -u FERRY_DAEMON_SOCKET -u FERRY_DAEMON XDG_RUNTIME_DIR='" + run + "' bin/ferry";
        String push = ferry + " image push '" + image
                + "' --store OUT --job bench --generation 0 --rank 0 > /dev/null";
        String pull = ferry + " image pull --store OUT --job bench --generation 0 --rank 0 DEST > /dev/null";
        String zstdPush = "cd '" + image + "' && find . -type f"
                + " | while read -r f; do mkdir -p \"OUT/$(dirname \"$f\")\";"
                + " zstd -1 -T0 -q \"$f\" -o \"OUT/$f.zst\"; done && sync -f OUT";
        String zstdPull = "cd OUT && find . -type f -name '*.zst'"
                + " | while read -r f; do mkdir -p \"DEST/$(dirname \"$f\")\";"
                + " zstd -d -q \"$f\" -o \"DEST/${f%.zst}\"; done && sync -f DEST";
        sh("bin/ferry help > /dev/null 2>&1 || true"); // bin/ferry builds on first use: not what is measured
        double[] first = round(work, push, pull);
        System.out.printf(Locale.ROOT,
                "first command (starts the daemon, runs in its own JVM): push %.2f s, pull %.2f s%n",
                first[0], first[1]);
        List<double[]> ferryRounds = new ArrayList<>();
        List<double[]> zstdRounds = new ArrayList<>();
        try {
            for (int i = 0; i < rounds; i++) {
                ferryRounds.add(round(work, push, pull));
                zstdRounds.add(round(work, zstdPush, zstdPull));
                System.out.printf(Locale.ROOT,
                        "round %d: Ferry push %.2f s, pull %.2f s; zstd push %.2f s, pull %.2f s%n", i + 1,
                        ferryRounds.get(i)[0], ferryRounds.get(i)[1], zstdRounds.get(i)[0], zstdRounds.get(i)[1]);
            }
        } finally {
            // [d]: the pattern must not match this very shell's command line, which holds it
            sh("pkill -f -- '--socket " + run + "/ferry/[d]aemon.sock' || true");
        }
        double fPush = median(ferryRounds, 0);
        double fPull = median(ferryRounds, 1);
        double zPush = median(zstdRounds, 0);
        double zPull = median(zstdRounds, 1);
        System.out.printf(Locale.ROOT,
                "%nImage %s (seed 42), %d cores, medians of %d alternated rounds, each command a new shell%n%n",
                Sizes.format(size), Runtime.getRuntime().availableProcessors(), rounds);
        System.out.println("| by hand | push s | pull s | push zstd/Ferry | pull zstd/Ferry |");
        System.out.println("|---|---:|---:|---:|---:|");
        System.out.printf(Locale.ROOT,
                "| `bin/ferry image push` / `pull`, the daemon it started | %.2f | %.2f | %.2fx | %.2fx |%n",
                fPush, fPull, zPush / fPush, zPull / fPull);
        System.out.printf(Locale.ROOT, "| `zstd -1 -T0` / `zstd -d` on each file + sync | %.2f | %.2f | | |%n",
                zPush, zPull);
    }

    /**
     * One push then one pull (OUT and DEST emptied first; OUT read into the page cache before the pull).
     */
    private static double[] round(Path work, String push, String pull) throws IOException {
        Path out = work.resolve("out");
        Path dest = work.resolve("dest");
        FileTrees.delete(out);
        FileTrees.delete(dest);
        Files.createDirectories(out);
        Files.createDirectories(dest);
        sh("sync");
        double p = timed(push.replace("OUT", out.toString()));
        sh("find '" + out + "' -type f -exec cat {} + > /dev/null && sync");
        double q = timed(pull.replace("OUT", out.toString()).replace("DEST", dest.toString()));
        return new double[] {p, q};
    }

    private static double median(List<double[]> rows, int column) {
        double[] v = rows.stream().mapToDouble(r -> r[column]).sorted().toArray();
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

}
