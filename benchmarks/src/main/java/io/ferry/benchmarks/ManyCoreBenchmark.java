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

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The staging benchmark for a machine with many cores and no build tools: it needs only a JRE, the
 * jars of {@code benchmarks/device-kit.sh} and a {@code zstd} binary, so that it runs where neither
 * Maven nor a JDK is installed. Same seeded image and same rules as {@link StagingBenchmark} (every
 * write ends durable, every input comes from the page cache), fewer rows: Ferry's in-process
 * pipeline (what a node's agent runs), the whole {@code ferry image push}/{@code pull} command in a
 * JVM of its own, {@code zstd -1 -T0} and {@code zstd -d} on each file, and the disk's floors ({@code
 * cp} + {@code sync} of the image and of zstd's files), alternated for a number of rounds, medians
 * and ratios. Then how the pipeline scales: a push and a pull with 1 to 48 workers.
 *
 * <p>Arguments: {@code SIZE WORK_DIR [ROUNDS]}; environment {@code ZSTD} (the zstd binary, default
 * {@code zstd}). The whole command runs as {@code <this JVM's java> -cp <this classpath> io.ferry.cli.Main}.
 */
public final class ManyCoreBenchmark {
    private ManyCoreBenchmark() {}

    /** One way's times over the rounds; CPU where it was taken (the in-process rows: this JVM's). */
    private record Times(List<Double> push, List<Double> pull, List<Double> pushCpu, List<Double> pullCpu,
                         long[] stored) {
        Times() {
            this(new ArrayList<>(), new ArrayList<>(), new ArrayList<>(), new ArrayList<>(), new long[1]);
        }

        double medianPush() {
            return median(push);
        }

        double medianPull() {
            return median(pull);
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: ManyCoreBenchmark SIZE WORK_DIR [ROUNDS]");
            System.exit(2);
        }
        long size = Sizes.parse(args[0]);
        Path work = Path.of(args[1]).toAbsolutePath();
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        String zstd = System.getenv().getOrDefault("ZSTD", "zstd");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String cli = "'" + java + "' -Djna.tmpdir='" + work.resolve("jna") + "' -cp '"
                + System.getProperty("java.class.path") + "' io.ferry.cli.Main";
        int cores = Runtime.getRuntime().availableProcessors();

        FileTrees.delete(work);
        Path image = work.resolve("image");
        long t0 = System.nanoTime();
        SyntheticImage.write(image, size, 42, 0);
        sh("sync");
        System.err.printf(Locale.ROOT, "a %s seeded image in %s (%.1f s), %d cores, %s%n", Sizes.format(size), image,
                (System.nanoTime() - t0) / 1e9, cores, sh("'" + zstd + "' -V"));

        // the JIT's warm-up for the in-process rows: a quarter of the image pushed and pulled twice
        Path warm = work.resolve("warm-up");
        SyntheticImage.write(warm, Math.max(64L << 20, size / 4), 7, 0);
        for (int i = 0; i < 2; i++) {
            inProcess(work, warm, Map.of(), new Times());
        }
        FileTrees.delete(warm);

        String zstdPush = "cd IMG && for f in *; do '" + zstd + "' -1 -T0 -q \"$f\" -o \"OUT/$f.zst\"; done"
                + " && sync -f OUT";
        String zstdPull = "cd OUT && for f in *.zst; do '" + zstd + "' -d -q \"$f\" -o \"DEST/${f%.zst}\"; done"
                + " && sync -f DEST";
        Path zstdFiles = work.resolve("zstd-files");
        Files.createDirectories(zstdFiles);
        sh(zstdPush.replace("IMG", image.toString()).replace("OUT", zstdFiles.toString()));

        Map<String, Times> ways = new LinkedHashMap<>();
        for (String w : List.of("ferry", "command", "zstd", "cp", "cpz")) {
            ways.put(w, new Times());
        }
        String push = " image push IMG --store OUT --job bench --generation 0 --rank 0 > /dev/null";
        String pull = " image pull --store OUT --job bench --generation 0 --rank 0 DEST > /dev/null";
        for (int r = 0; r < rounds; r++) {
            inProcess(work, image, Map.of(), ways.get("ferry"));
            shell(work, image, cli + push, cli + pull, ways.get("command"));
            shell(work, image, zstdPush, zstdPull, ways.get("zstd"));
            shell(work, image, "cp -r IMG/. OUT/ && sync -f OUT", "true", ways.get("cp"));
            shell(work, image, "cp -r '" + zstdFiles + "'/. OUT/ && sync -f OUT", "true", ways.get("cpz"));
            System.err.printf(Locale.ROOT, "round %d: ferry %.2f/%.2f s, command %.2f/%.2f s, zstd %.2f/%.2f s,"
                    + " cp %.2f s, cp of zstd's files %.2f s%n", r + 1,
                    last(ways.get("ferry").push()), last(ways.get("ferry").pull()), last(ways.get("command").push()),
                    last(ways.get("command").pull()), last(ways.get("zstd").push()), last(ways.get("zstd").pull()),
                    last(ways.get("cp").push()), last(ways.get("cpz").push()));
        }
        FileTrees.delete(zstdFiles);

        Times z = ways.get("zstd");
        System.out.printf(Locale.ROOT, "%nImage: %s (%d bytes, seed 42), %d cores, medians of %d alternated rounds%n%n",
                Sizes.format(size), size, cores, rounds);
        System.out.println("| way | push s | push MB/s | stored | pull s | pull MB/s"
                + " | push speed-up over zstd | pull speed-up over zstd |");
        System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|");
        row("**Ferry**, in-process pipeline (what a node's agent runs)", ways.get("ferry"), z, size);
        row("`ferry image push` / `pull` (whole command, a JVM of its own)", ways.get("command"), z, size);
        row("`zstd -1 -T0` / `zstd -d` on each file", z, z, size);
        System.out.printf(Locale.ROOT, "%nThe disk's floors: the image written as it is (`cp -r` + `sync`)"
                + " %.2f s (%.0f MB/s); zstd's files written as they are %.2f s.%n", ways.get("cp").medianPush(),
                size / 1e6 / ways.get("cp").medianPush(), ways.get("cpz").medianPush());

        System.out.printf(Locale.ROOT,
                "%nScaling: the in-process pipeline with staging.workers = N (one push and pull each)%n%n");
        System.out.println("| workers | push s | push MB/s | push CPU s | pull s | pull MB/s | pull CPU s |");
        System.out.println("|---:|---:|---:|---:|---:|---:|---:|");
        for (int n : new int[] {1, 2, 4, 8, 16, 32, 48}) {
            Times t = new Times();
            inProcess(work, image, Map.of("staging.workers", Integer.toString(n)), t);
            System.out.printf(Locale.ROOT, "| %d | %.2f | %.0f | %.1f | %.2f | %.0f | %.1f |%n", n, t.medianPush(),
                    size / 1e6 / t.medianPush(), t.pushCpu().get(0), t.medianPull(), size / 1e6 / t.medianPull(),
                    t.pullCpu().get(0));
        }
        FileTrees.delete(work);
    }

    private static void row(String label, Times t, Times zstd, long size) {
        System.out.printf(Locale.ROOT, "| %s | %.2f | %.0f | %.1f MiB | %.2f | %.0f | %.2fx | %.2fx |%n", label,
                t.medianPush(), size / 1e6 / t.medianPush(), t.stored()[0] / 1048576.0, t.medianPull(),
                size / 1e6 / t.medianPull(), zstd.medianPush() / t.medianPush(), zstd.medianPull() / t.medianPull());
    }

    /** One push and pull by the pipeline in this JVM, timed by the pipeline itself, CPU of this JVM. */
    private static void inProcess(Path work, Path image, Map<String, String> settings, Times into) throws IOException {
        Path storeDir = work.resolve("ferry-store");
        Path out = work.resolve("ferry-out");
        FileTrees.delete(storeDir);
        FileTrees.delete(out);
        try (Store store = Stores.open(storeDir.toUri(), Map.of());
             StagingPipeline p = Staging.pipeline(store, StagingConfig.from(settings), Clock.systemUTC(),
                     Optional.empty())) {
            ImageRef ref = new ImageRef("bench", 0, 0);
            sh("sync");
            double c0 = StagingBenchmark.cpuSeconds();
            PushResult pushed = p.push(image, ref, Progress.NONE);
            into.pushCpu().add(StagingBenchmark.cpuSeconds() - c0);
            into.push().add(pushed.elapsed().toNanos() / 1e9);
            into.stored()[0] = StagingBenchmark.du(storeDir);
            sh("find '" + storeDir + "' -type f -exec cat {} + > /dev/null && sync");
            double c1 = StagingBenchmark.cpuSeconds();
            PullResult pulled = p.pull(ref, out, Progress.NONE);
            into.pullCpu().add(StagingBenchmark.cpuSeconds() - c1);
            into.pull().add(pulled.elapsed().toNanos() / 1e9);
        }
        FileTrees.delete(out);
        FileTrees.delete(storeDir);
    }

    /** One push and pull by shell commands (IMG, OUT, DEST replaced), timed around the command. */
    private static void shell(Path work, Path image, String push, String pull, Times into) throws IOException {
        Path out = work.resolve("peer-out");
        Path dest = work.resolve("peer-dest");
        StagingBenchmark.emptyDirs(out, dest);
        sh("sync");
        long t0 = System.nanoTime();
        sh(push.replace("IMG", image.toString()).replace("OUT", out.toString()));
        into.push().add((System.nanoTime() - t0) / 1e9);
        into.stored()[0] = StagingBenchmark.du(out);
        sh("find '" + out + "' -type f -exec cat {} + > /dev/null && sync");
        long t1 = System.nanoTime();
        sh(pull.replace("OUT", out.toString()).replace("DEST", dest.toString()));
        into.pull().add((System.nanoTime() - t1) / 1e9);
        FileTrees.delete(out);
        FileTrees.delete(dest);
    }

    private static double last(List<Double> l) {
        return l.get(l.size() - 1);
    }

    private static double median(List<Double> l) {
        double[] s = l.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    /** Runs {@code cmd} in bash; its first line of output (stdout and stderr), or an exception if it failed. */
    private static String sh(String cmd) throws IOException {
        try {
            Process p = new ProcessBuilder("bash", "-o", "pipefail", "-c", cmd).redirectErrorStream(true).start();
            byte[] out = p.getInputStream().readAllBytes();
            if (p.waitFor() != 0) {
                throw new IOException("command failed (" + p.exitValue() + "): " + cmd + "\n" + new String(out));
            }
            String s = new String(out).strip();
            return s.isEmpty() ? "" : s.lines().findFirst().orElse("");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted: " + cmd, e);
        }
    }
}
