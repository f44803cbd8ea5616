package io.ferry.cli;

import io.ferry.cli.log.ServedLog;
import io.ferry.model.Durations;
import io.ferry.model.OwnerOnly;
import io.ferry.model.Sizes;
import io.ferry.staging.StagingConfig;
import io.ferry.staging.internal.FileTrees;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.Writer;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** {@code ferry daemon}: a JVM that stays up and runs this user's image pushes and pulls on this node, warm. */
@Command(name = "daemon", mixinStandardHelpOptions = true,
        description = {
                "Serve `ferry image push` and `ferry image pull` of this user on this node from a JVM that stays up,",
                "so that each command starts in a fifth of a second with its hot loops compiled"
                        + " (as Gradle's daemon does",
                "for builds). bin/ferry hands such a command to the daemon when one serves the"
                        + " socket, and runs it in a",
                "JVM of its own when none does, or when the daemon's build or environment (FERRY_*, AWS_*, HADOOP_*,",
                "PATH...) differs from the command's: the same result, output and exit code either way. Runs in the",
                "foreground (start it with & or in a job script); exits when idle for --idle-exit, on SIGTERM, or when",
                "the distribution is rebuilt. FERRY_DAEMON=off makes bin/ferry never use it."})
final class DaemonCommand implements Callable<Integer> {
    @Option(names = "--socket", paramLabel = "PATH",
            description = "Socket to serve (default $FERRY_DAEMON_SOCKET, else $XDG_RUNTIME_DIR/ferry/daemon.sock, else"
                    + " /tmp/ferry-UID/daemon.sock); its directory is created 0700 and must be yours.")
    Path socket;
    @Option(names = "--idle-exit", paramLabel = "DURATION", defaultValue = "30m",
            description = "Exit after this long without a command (default ${DEFAULT-VALUE}; 0: never).")
    String idleExit;
    @Option(names = "--warm-up", paramLabel = "SIZE", defaultValue = "64MiB",
            description =
                    "Before serving, push and pull two made-up images of this size, three times in all, in a private"
                    + " temporary directory, so that the first command finds the hot code compiled"
                    + " (default ${DEFAULT-VALUE};"
                    + " 0: none). With the default: about 2.5-3.5 s on two cores and 0.4 GB of temporary disk, once.")
    String warmUp;

    @Override
    public Integer call() throws Exception {
        Duration idle = idleExit.strip().equals("0") ? Duration.ZERO : Durations.parse(idleExit);
        long warm = Sizes.parse(warmUp);
        Map<String, String> env = System.getenv();
        Path at = socket != null ? socket.toAbsolutePath() : ThinClient.socket(env);
        CountDownLatch said = new CountDownLatch(1);
        try (DaemonServer server = new DaemonServer(at, idle, env)) {
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    server.close();
                    // The JVM halts once the hooks are done: let the serving thread say it stopped first (under
                    // load it was often not scheduled before the halt, and the log never said the daemon stopped).
                    said.await(5, TimeUnit.SECONDS);
                } catch (IOException e) {
                    // exiting anyway; a socket left behind is removed by the next daemon
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "ferry-daemon-stop"));
            if (warm > 0) {
                warmUp(warm);
            }
            ServedLog.install(); // a served command's log lines reach its client too
            System.err.println("ferry daemon: serving image push and pull for uid " + ThinClient.uid() + " on " + at
                    + (idle.isZero() ? "" : " (exits after " + idleExit + " idle)"));
            server.serve();
            System.err.println("ferry daemon: stopped after " + server.served() + " commands");
            System.err.flush();
            said.countDown();
        }
        return 0;
    }

    /** Blob size of the warm-up's first two rounds: sixteen times the default's blobs in the same bytes. */
    static final String WARM_UP_BLOBS = "4KiB";

    /**
     * Pushes and pulls made-up images of {@code bytes} three times, in a private temporary directory, as a client's
     * commands are served ({@link Main#run(Invocation, String...)}, their output dropped): the command line's
     * parsing, the store's opening and the printing are warmed too, not only the pipeline. Warmed through the
     * pipeline alone, the first command served took 0.2 to 0.3 s longer than the next ones, whatever its size.
     *
     * <p>The first two rounds cut their images into {@link #WARM_UP_BLOBS} blobs, two images so that the second
     * round's blobs are new to the store too: what is run once a blob (naming, the codec's choice, the record's
     * append, thousands of calls before the JIT compiles them fully) then runs 16,000 times in 64 MiB. With two
     * rounds of the default blobs (about 800 blobs written), a fresh daemon's first push of the 1 GiB seeded image
     * took 1.54-1.59 s and 2.9-3.0 CPU s, its second 1.37-1.42 s; with these rounds, 1.31-1.43 s and 2.5-2.7 CPU s,
     * then 1.31-1.38 s (four fresh daemons each, alternated, 2026-11-27, two cores). A command that fails ends
     * the warm-up, said on stderr: serving does not depend on it. Then it waits for the JIT ({@link #awaitJitQuiet}).
     */
    private static void warmUp(long bytes) throws IOException {
        long t0 = System.nanoTime();
        Path tmp = Files.createTempDirectory("ferry-daemon-warm-up");
        try {
            OwnerOnly.restrict(tmp);
            SyntheticImage.write(tmp.resolve("img0"), bytes, 7, 0);
            SyntheticImage.write(tmp.resolve("img1"), bytes, 8, 1);
            StringWriter said = new StringWriter();
            PrintWriter dropped = new PrintWriter(said);
            Invocation served = Invocation.client(tmp, false, new PrintWriter(Writer.nullWriter()), dropped);
            for (int round = 0; round < 3; round++) {
                // Two rounds in small blobs, each image new to the store: the code run once a blob crosses the JIT's
                // thresholds (thousands of calls) with a few MiB. The last round as clients' commands come.
                String ref = "--store store --job warm-up --generation " + round + " --rank 0"
                        + (round < 2 ? " --set " + StagingConfig.BLOB_SIZE.name() + "=" + WARM_UP_BLOBS : "");
                for (String command : List.of("image push img" + round % 2 + " " + ref,
                        "image pull " + ref + " pulled" + round)) {
                    // what the last command said (a pull warns of its missing commit marker)
                    said.getBuffer().setLength(0);
                    int code = Main.run(served, command.split(" "));
                    if (code != 0) { // the clients' commands will likely fail alike: say it now, once
                        System.err.println("ferry daemon: warm-up stopped: `ferry " + command + "` exited with " + code
                                + ": " + said.toString().strip());
                        return;
                    }
                }
            }
        } finally {
            FileTrees.delete(tmp);
        }
        double settled = awaitJitQuiet(5_000);
        System.err.println(String.format(Locale.ROOT, "ferry daemon: warmed up (two images of %s pushed and pulled,"
                + " three rounds, %.1f s; JIT settled in %.1f s)",
                Sizes.format(bytes), (System.nanoTime() - t0) / 1e9, settled));
    }

    /**
     * Waits until the JIT compilers have finished what the warm-up queued (their total compilation time grows by
     * under 2 ms in 100 ms, three times running), at most {@code maxMillis}; returns the seconds waited. What
     * is still queued would be compiled during the first push served, on the cores it needs. A guard, not a
     * measured gain: on two cores the queue was (nearly) empty by the warm-up's end in every fresh daemon
     * timed (settled in 0.3-0.4 s, the least this waits); the 0.13-0.69 CPU s of compilations JFR showed in
     * a fresh daemon's first pushes are of code the warm-up ran too seldom, not a queue left behind.
     */
    static double awaitJitQuiet(long maxMillis) {
        long t0 = System.nanoTime();
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        if (jit == null || !jit.isCompilationTimeMonitoringSupported()) {
            return 0;
        }
        long last = jit.getTotalCompilationTime();
        for (int quiet = 0; quiet < 3 && System.nanoTime() - t0 < maxMillis * 1_000_000L; ) {
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            long now = jit.getTotalCompilationTime();
            quiet = now - last < 2 ? quiet + 1 : 0;
            last = now;
        }
        return (System.nanoTime() - t0) / 1e9;
    }
}
