package io.ferry.benchmarks;

import com.sun.management.OperatingSystemMXBean;
import io.ferry.cli.SyntheticImage;
import io.ferry.model.ImageRef;
import io.ferry.model.Sizes;
import io.ferry.staging.Progress;
import io.ferry.staging.PullResult;
import io.ferry.staging.PushResult;
import io.ferry.staging.Staging;
import io.ferry.staging.StagingConfig;
import io.ferry.staging.StagingPipeline;
import io.ferry.staging.crypt.Keys;
import io.ferry.staging.internal.FileTrees;
import io.ferry.stores.Store;
import io.ferry.stores.Stores;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

import static io.ferry.benchmarks.Shell.sh;
import static io.ferry.benchmarks.Shell.timed;

/**
 * Push and pull of one realistic image: Ferry against the tools a user has today, same image,
 * same disk, same run. Every tool's write ends durable (Ferry fsyncs each object; the peers
 * are followed by {@code sync}), and every tool reads its input from the page cache, so they
 * are compared on equal terms. Prints a Markdown table with ratios to Ferry, then the cost of
 * encryption at rest: Ferry's default pipeline with and without a key, alternated five times in
 * the same run (medians), as a ratio. A third argument {@code ferry} runs only the Ferry rows: no
 * peer tools, no {@code bin/ferry} (which builds and installs the distribution on first use).
 */
public final class StagingBenchmark {
    /**
     * One tool's figures; {@code pushCpu}, {@code pullCpu}: CPU seconds, this JVM's for the in-process rows, the
     * command's (and the daemon's, where one served it) for the others.
     */
    private record Row(String tool, double pushSeconds, long storedBytes, double pullSeconds, double pushCpu,
                       double pullCpu) {
        Row(String tool, double pushSeconds, long storedBytes, double pullSeconds) {
            this(tool, pushSeconds, storedBytes, pullSeconds, Double.NaN, Double.NaN);
        }
    }

    /** CPU seconds this JVM has used: on a machine shared with other work, steadier than wall time. */
    static double cpuSeconds() {
        return ((OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime() / 1e9;
    }

    /**
     * CPU seconds of the processes this JVM has waited for, and of theirs ({@code cutime + cstime} in
     * {@code /proc/self/stat}): a peer command's CPU is the difference around it. NaN off Linux.
     */
    private static double childCpuSeconds() {
        return ticks(Path.of("/proc/self/stat"), 13);
    }

    /** CPU seconds of a running process ({@code utime + stime}), e.g. the daemon serving a command. NaN off Linux. */
    private static double processCpuSeconds(long pid) {
        return ticks(Path.of("/proc/" + pid + "/stat"), 11);
    }

    /**
     * Two clock-tick fields of a {@code stat} file, {@code at} and {@code at + 1} counted after the command's name,
     * in seconds.
     */
    private static double ticks(Path stat, int at) {
        try {
            String s = Files.readString(stat);
            String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
            return (Long.parseLong(f[at]) + Long.parseLong(f[at + 1])) / (double) CLOCK_TICKS;
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }

    /** {@code sysconf(_SC_CLK_TCK)}: 100 on every Linux this runs on (the kernel's USER_HZ). */
    private static final int CLOCK_TICKS = 100;

    private StagingBenchmark() {}

    public static void main(String[] args) throws Exception {
        long size = Sizes.parse(args.length > 0 ? args[0] : "2GiB");
        Path work = Path.of(args.length > 1 ? args[1] : "bench-work").toAbsolutePath();
        FileTrees.delete(work);
        Path image = work.resolve("image");
        System.err.printf("generating a %s seeded image in %s%n", Sizes.format(size), image);
        SyntheticImage.write(image, size, 42, 0);
        sh("sync");

        boolean ferryOnly = args.length > 2 && args[2].equals("ferry");
        List<Row> rows = new ArrayList<>();
        warmUp(work);
        rows.add(ferry(work, image, size, Map.of(), "**Ferry** (default: packs, 64 KiB blobs, zstd -1)",
                Optional.empty()));
        List<Row> encryption = encryption(work, image, size);
        if (!ferryOnly) {
            peers(work, image, size, rows);
        }

        Row f = rows.get(0);
        System.out.printf(Locale.ROOT, "%nImage: %s (%d bytes, seed 42: 15%% code, 40%% heap pages with zeros,"
                + " 30%% float fields, 15%% random), %d cores%n%n", Sizes.format(size), size,
                Runtime.getRuntime().availableProcessors());
        table(rows, f, size);
        System.out.print(FLOORS);
        System.out.printf(Locale.ROOT, "%nEncryption at rest (AES-256-GCM per record, HMAC-SHA256 names): medians of %d"
                + " alternated runs of the default pipeline%n%n", ROUNDS);
        System.out.println("| pipeline | push s | push CPU s | pull s | pull CPU s | stored | push time / CPU vs clear"
                + " | pull time / CPU vs clear |");
        System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|");
        Row c = encryption.get(0);
        for (Row r : encryption) {
            System.out.printf(Locale.ROOT,
                    "| %s | %.2f | %.2f | %.2f | %.2f | %.1f MiB | %.2fx / %.2fx | %.2fx / %.2fx |%n",
                    r.tool(), r.pushSeconds(), r.pushCpu(), r.pullSeconds(), r.pullCpu(), r.storedBytes() / 1048576.0,
                    r.pushSeconds() / c.pushSeconds(), r.pushCpu() / c.pushCpu(), r.pullSeconds() / c.pullSeconds(),
                    r.pullCpu() / c.pullCpu());
        }
    }

    /** Runs of the clear and the encrypted pipeline, alternated, whose medians the encryption table gives. */
    private static final int ROUNDS = 5;

    private static void table(List<Row> rows, Row f, long size) {
        System.out.println("| tool | push MB/s | stored | ratio | pull MB/s"
                + " | Ferry push speed-up | Ferry pull speed-up |");
        System.out.println("|---|---:|---:|---:|---:|---:|---:|");
        for (Row r : rows) {
            System.out.printf(Locale.ROOT, "| %s | %.0f | %.1f MiB | %.3fx | %.0f | %.2fx | %.2fx |%n", r.tool(),
                    size / 1e6 / r.pushSeconds(), r.storedBytes() / 1048576.0, (double) size / r.storedBytes(),
                    size / 1e6 / r.pullSeconds(), r.pushSeconds() / f.pushSeconds(), r.pullSeconds() / f.pullSeconds());
        }
    }

    /**
     * The default pipeline in the clear and with a fresh random key, alternated three times so that a
     * machine loaded by something else weighs on both alike; the median push and pull of each.
     */
    private static List<Row> encryption(Path work, Path image, long size) throws IOException {
        Optional<Keys> key = Optional.of(randomKey());
        List<Row> clear = new ArrayList<>();
        List<Row> sealed = new ArrayList<>();
        for (int i = 0; i < ROUNDS; i++) {
            clear.add(ferry(work, image, size, Map.of(), "Ferry, clear", Optional.empty()));
            sealed.add(ferry(work, image, size, Map.of(), "Ferry, encrypted", key));
        }
        return List.of(median("Ferry default, in the clear", clear),
                median("Ferry default, encrypted (`encryption.key-file`)", sealed));
    }

    private static Keys randomKey() {
        byte[] master = new byte[32];
        new SecureRandom().nextBytes(master);
        return Keys.parse(HexFormat.of().formatHex(master), "a random benchmark key");
    }

    private static Row median(String label, List<Row> runs) {
        double[] push = runs.stream().mapToDouble(Row::pushSeconds).sorted().toArray();
        double[] pull = runs.stream().mapToDouble(Row::pullSeconds).sorted().toArray();
        double[] pushCpu = runs.stream().mapToDouble(Row::pushCpu).sorted().toArray();
        double[] pullCpu = runs.stream().mapToDouble(Row::pullCpu).sorted().toArray();
        return new Row(label, push[push.length / 2], runs.get(0).storedBytes(), pull[pull.length / 2],
                pushCpu[pushCpu.length / 2], pullCpu[pullCpu.length / 2]);
    }

    /**
     * Rounds of the whole commands and their peers, alternated; each row is their median. Five, not three: a
     * fresh daemon's first one or two pushes still pay the JIT's last compilations (0.1-0.4 CPU s of C2, seen
     * with JFR's compilation events), and on this shared VM a round of any tool can run 10% slow; with three,
     * one such round of Ferry and one fast one of zstd decided a run's ratio. Every round is printed on stderr.
     */
    private static final int PEER_ROUNDS = 5;

    private static void peers(Path work, Path image, long size, List<Row> rows) throws Exception {
        // The same pipeline writing its packs through the page cache, as before posix.direct-io.
        rows.add(ferry(work, image, size, Map.of("posix.direct-io", "off"),
                "Ferry, packs written through the page cache (`posix.direct-io=off`)", Optional.empty()));
        // The whole command a user types, its JVM start included (the rows above are the pipeline in this JVM),
        // in a JVM of its own and handed to `ferry daemon`, beside zstd on each file itself (as a user compresses a
        // checkpoint directory without tar): alternated PEER_ROUNDS times, medians, since these are the ratios.
        // bin/ferry builds the distribution on first use, which is not what these rows measure.
        sh("bin/ferry help > /dev/null 2>&1 || true");
        Path socket = work.resolve("daemon/daemon.sock");
        String image1 = " image push IMG --store OUT --job bench --generation 0 --rank 0 > /dev/null";
        String image2 = " image pull --store OUT --job bench --generation 0 --rank 0 DEST > /dev/null";
        String served = "FERRY_DAEMON_SOCKET='" + socket + "' bin/ferry";
        String zstdPush = "cd IMG && find . -type f | while read -r f; do mkdir -p \"OUT/$(dirname \"$f\")\";"
                + " zstd -1 -T0 -q \"$f\" -o \"OUT/$f.zst\"; done && sync -f OUT";
        // zstd's compressed files, kept (and cached) for the push's disk floor: the same bytes written by cp.
        Path zstdFiles = work.resolve("zstd-files");
        FileTrees.delete(zstdFiles);
        Files.createDirectories(zstdFiles);
        sh(zstdPush.replace("IMG", image.toString()).replace("OUT", zstdFiles.toString()));
        List<List<Row>> runs = List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>(), new ArrayList<>(),
                new ArrayList<>());
        Process daemon = startDaemon(work, socket);
        try {
            for (int i = 0; i < PEER_ROUNDS; i++) {
                runs.get(0).add(peer(work, "`ferry image push` / `pull` (whole command, a JVM of its own)",
                        "FERRY_DAEMON=off bin/ferry" + image1, "FERRY_DAEMON=off bin/ferry" + image2, image));
                runs.get(1).add(peer(work, "`ferry image push` / `pull` (whole command, handed to `ferry daemon`)",
                        served + image1, served + image2, image, daemon.pid()));
                runs.get(2).add(peer(work, "zstd -1 -T0 on each file", zstdPush,
                        "cd OUT && find . -type f -name '*.zst'"
                                + " | while read -r f; do mkdir -p \"DEST/$(dirname \"$f\")\";"
                                + " zstd -d -q \"$f\" -o \"DEST/${f%.zst}\"; done && sync -f DEST", image));
                // The disk's floors, in the same rounds: the image's bytes (what a pull writes), and zstd's
                // compressed bytes (what a push writes), each copied from the page cache and synced.
                runs.get(3).add(peer(work, "cp + sync", "cp -r IMG/. OUT/ && sync -f OUT",
                        "cp -r OUT/. DEST/ && sync -f DEST", image));
                cached(zstdFiles);
                runs.get(4).add(peer(work, "cp of zstd's files + sync",
                        "cp -r '" + zstdFiles + "'/. OUT/ && sync -f OUT", "true", image));
            }
        } finally {
            daemon.destroy();
            daemon.waitFor();
        }
        FileTrees.delete(zstdFiles);
        for (List<Row> r : runs.subList(0, 4)) {
            rows.add(median(r.get(0).tool() + " (median of " + PEER_ROUNDS + ")", r));
        }
        floors(median("served", runs.get(1)), median("zstd", runs.get(2)), median("cp", runs.get(3)),
                median("cp zstd", runs.get(4)));
        rows.add(peer(work, "tar + zstd -1 -T0",
                "tar -cf - -C IMG . | zstd -1 -T0 -q -o OUT/img.tar.zst && sync OUT/img.tar.zst",
                "zstd -d -q -c OUT/img.tar.zst | tar -xf - -C DEST && sync -f DEST", image));
        rows.add(peer(work, "tar + gzip -1", "tar -cf - -C IMG . | gzip -1 > OUT/img.tar.gz && sync OUT/img.tar.gz",
                "gzip -d -c OUT/img.tar.gz | tar -xf - -C DEST && sync -f DEST", image));
    }

    /**
     * What this machine allows, from the alternated rounds' medians: the disk's floor for a pull (the image's
     * bytes written as they are: {@code cp -r} of the page-cached image + {@code sync}) and for a push (zstd's
     * compressed files written the same way), each command's CPU over the cores, and the most a tool bound by
     * the larger of the two floors could gain over zstd. Printed after the main table.
     */
    private static void floors(Row ferry, Row zstd, Row cp, Row cpZstd) {
        int cores = Runtime.getRuntime().availableProcessors();
        FLOORS.append(String.format(Locale.ROOT,
                "%nThe same rounds' floors (medians of %d, %d cores): what the disk and the CPUs allow%n%n",
                PEER_ROUNDS, cores));
        FLOORS.append("| | push s | push CPU s | pull s | pull CPU s |\n|---|---:|---:|---:|---:|\n");
        FLOORS.append(String.format(Locale.ROOT, "| `ferry image push` / `pull`, handed to `ferry daemon`"
                + " (CPU: the daemon's and the command's) | %.2f | %.2f | %.2f | %.2f |%n",
                ferry.pushSeconds(), ferry.pushCpu(), ferry.pullSeconds(), ferry.pullCpu()));
        FLOORS.append(String.format(Locale.ROOT,
                "| `zstd -1 -T0` / `zstd -d` on each file | %.2f | %.2f | %.2f | %.2f |%n",
                zstd.pushSeconds(), zstd.pushCpu(), zstd.pullSeconds(), zstd.pullCpu()));
        FLOORS.append(String.format(Locale.ROOT,
                "| the image's bytes written as they are (`cp -r` of the cached image + `sync`) | | | %.2f | %.2f |%n",
                cp.pushSeconds(), cp.pushCpu()));
        FLOORS.append(String.format(Locale.ROOT,
                "| zstd's compressed files written as they are (`cp -r` + `sync`) | %.2f | %.2f | | |%n",
                cpZstd.pushSeconds(), cpZstd.pushCpu()));
        double pushCpuFloor = ferry.pushCpu() / cores;
        double pullCpuFloor = ferry.pullCpu() / cores;
        FLOORS.append(String.format(Locale.ROOT, "%nPush: the larger of the disk's floor (%.2f s)"
                + " and Ferry's CPU over the cores (%.2f s); zstd's time over it, %.2fx, is the most a push"
                + " that takes Ferry's CPU could gain over zstd here. Measured: %.2fx.%n",
                cpZstd.pushSeconds(), pushCpuFloor, zstd.pushSeconds() / Math.max(cpZstd.pushSeconds(), pushCpuFloor),
                zstd.pushSeconds() / ferry.pushSeconds()));
        FLOORS.append(String.format(Locale.ROOT, "Pull: the larger of the disk's floor (%.2f s)"
                + " and Ferry's CPU over the cores (%.2f s); zstd's time over it, %.2fx, is the most a pull"
                + " that writes every byte and takes Ferry's CPU could gain. Measured: %.2fx.%n",
                cp.pushSeconds(), pullCpuFloor, zstd.pullSeconds() / Math.max(cp.pushSeconds(), pullCpuFloor),
                zstd.pullSeconds() / ferry.pullSeconds()));
    }

    /** The floors' table, printed after the main one. */
    private static final StringBuilder FLOORS = new StringBuilder();

    /**
     * {@code bin/ferry daemon} on {@code socket}, serving (its own warm-up done); its log in {@code work/daemon.log}.
     */
    private static Process startDaemon(Path work, Path socket) throws IOException, InterruptedException {
        Path log = work.resolve("daemon.log");
        Process p = new ProcessBuilder("bin/ferry", "daemon", "--socket", socket.toString(), "--idle-exit", "10m")
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        long deadline = System.nanoTime() + 120_000_000_000L;
        while (!Files.readString(log).contains("serving")) {
            if (!p.isAlive() || System.nanoTime() > deadline) {
                p.destroy();
                throw new IOException("ferry daemon did not start: " + Files.readString(log));
            }
            Thread.sleep(100);
        }
        System.err.print(Files.readString(log));
        return p;
    }

    private static Row ferry(Path work, Path image, long size, Map<String, String> settings, String label,
                             Optional<Keys> keys) throws IOException {
        Path storeDir = work.resolve("ferry-store");
        FileTrees.delete(storeDir);
        Map<String, String> storeOptions = new HashMap<>(settings);
        storeOptions.keySet().removeIf(k -> !k.startsWith("posix."));
        Map<String, String> staging = new HashMap<>(settings);
        staging.keySet().removeAll(storeOptions.keySet());
        try (Store store = Stores.open(storeDir.toUri(), storeOptions);
             StagingPipeline p = Staging.pipeline(store, StagingConfig.from(staging), Clock.systemUTC(), keys)) {
            ImageRef ref = new ImageRef("bench", 0, 0);
            sh("sync");
            double cpu0 = cpuSeconds();
            PushResult push = p.push(image, ref, Progress.NONE);
            double pushCpu = cpuSeconds() - cpu0;
            System.err.printf(Locale.ROOT, "ferry push%s: %.2f s (%.2f CPU s), %d chunks (%d zero, %d known, %d new)%n",
                    keys.isPresent() ? " (encrypted)" : "", push.elapsed().toNanos() / 1e9, pushCpu, push.chunks(),
                    push.zeroChunks(), push.knownChunks(), push.newChunks());
            p.repository().commitSnapshot("bench", 0, 1);
            long stored = du(storeDir);

            if (settings.isEmpty() && keys.isEmpty() && label.startsWith("**")) {
                // The next generation of a long run: only the simulation's fields changed.
                Path next = work.resolve("image-next");
                SyntheticImage.write(next, size, 42, 1);
                sh("sync");
                PushResult incr = p.push(next, new ImageRef("bench", 1, 0), Progress.NONE);
                System.err.printf(Locale.ROOT, "ferry push of the next generation: %.2f s (%.0f MB/s raw), %s new%n",
                        incr.elapsed().toNanos() / 1e9, incr.rawMBps(), Sizes.format(incr.storedBytes()));
                FileTrees.delete(next);
            }

            cached(storeDir);
            double cpu1 = cpuSeconds();
            PullResult pull = p.pull(ref, work.resolve("ferry-out"), Progress.NONE);
            double pullCpu = cpuSeconds() - cpu1;
            System.err.printf(Locale.ROOT, "ferry pull%s: %.2f s (%.2f CPU s)%n",
                    keys.isPresent() ? " (encrypted)" : "", pull.elapsed().toNanos() / 1e9, pullCpu);
            FileTrees.delete(work.resolve("ferry-out"));
            return new Row(label, push.elapsed().toNanos() / 1e9, stored, pull.elapsed().toNanos() / 1e9,
                    pushCpu, pullCpu);
        }
    }

    /**
     * Compiles the pipeline's hot code before anything is timed: a 256 MiB image pushed and pulled
     * twice in this JVM, in the clear and encrypted (AES-GCM's intrinsics, too, wait for the JIT). Without it
     * the first Ferry row pays the JIT's warm-up (seen: 10.1 s where the same push took 4.3 s in the next row),
     * and the two Ferry rows could not be compared.
     */
    private static void warmUp(Path work) throws IOException {
        Path warm = work.resolve("warm-up");
        SyntheticImage.write(warm.resolve("image"), 256L << 20, 7, 0);
        for (int i = 0; i < 4; i++) {
            FileTrees.delete(warm.resolve("store"));
            try (Store store = Stores.open(warm.resolve("store").toUri(), Map.of());
                 StagingPipeline p = Staging.pipeline(store, StagingConfig.defaults(), Clock.systemUTC(),
                         i % 2 == 0 ? Optional.empty() : Optional.of(randomKey()))) {
                p.push(warm.resolve("image"), new ImageRef("warm", 0, 0), Progress.NONE);
                FileTrees.delete(warm.resolve("out"));
                p.pull(new ImageRef("warm", 0, 0), warm.resolve("out"), Progress.NONE);
            }
        }
        FileTrees.delete(warm);
    }

    private static Row peer(Path work, String name, String push, String pull, Path image) throws Exception {
        return peer(work, name, push, pull, image, -1);
    }

    /**
     * One push and pull by shell commands (IMG, OUT, DEST replaced), each timed and its CPU taken: the
     * command's and its children's, plus that of the daemon {@code daemonPid} (-1: none) that served it.
     */
    private static Row peer(Path work, String name, String push, String pull, Path image, long daemonPid)
            throws Exception {
        Path out = work.resolve("peer-out");
        Path dest = work.resolve("peer-dest");
        emptyDirs(out, dest);
        sh("sync");
        double c0 = commandCpu(daemonPid);
        double pushS = timed(push.replace("IMG", image.toString()).replace("OUT", out.toString()));
        double pushCpu = commandCpu(daemonPid) - c0;
        long stored = du(out);
        cached(out);
        double c1 = commandCpu(daemonPid);
        double pullS = timed(pull.replace("OUT", out.toString()).replace("DEST", dest.toString()));
        double pullCpu = commandCpu(daemonPid) - c1;
        System.err.printf(Locale.ROOT, "%s: push %.2f s (%.2f CPU s), pull %.2f s (%.2f CPU s)%n", name, pushS, pushCpu,
                pullS, pullCpu);
        FileTrees.delete(out);
        FileTrees.delete(dest);
        return new Row(name, pushS, stored, pullS, pushCpu, pullCpu);
    }

    /** Each directory emptied, or made: where a peer command writes. */
    static void emptyDirs(Path... dirs) throws IOException {
        for (Path d : dirs) {
            FileTrees.delete(d);
            Files.createDirectories(d);
        }
    }

    private static double commandCpu(long daemonPid) {
        return childCpuSeconds() + (daemonPid < 0 ? 0 : processCpuSeconds(daemonPid));
    }

    /**
     * Reads every file under {@code dir} once, then syncs: every tool's pull reads its input from the
     * page cache, Ferry's packs too, which it writes past the cache (O_DIRECT) where the peers'
     * files stay cached after their push.
     */
    private static void cached(Path dir) throws IOException {
        sh("find '" + dir + "' -type f -exec cat {} + > /dev/null && sync");
    }

    /** Bytes of the regular files under {@code dir}. */
    static long du(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile).mapToLong(p -> {
                try {
                    return Files.size(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }).sum();
        }
    }
}
