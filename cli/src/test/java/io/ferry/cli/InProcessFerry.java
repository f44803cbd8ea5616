package io.ferry.cli;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.function.IntSupplier;

/**
 * Runs a short {@code ferry} command in this test JVM, as {@code ferry daemon} serves one ({@link Main#run(Invocation,
 * String...)} for an invocation of its own): the same code, without the 1 to 2 CPU seconds a child JVM spends
 * starting, loading and compiling on a 2-core machine. The suite ran about 200 such children (stores listed,
 * verified and collected, images pushed and pulled, jobs listed); each now costs what its work costs.
 *
 * <p>Which commands run here is decided by {@link #serves}: commands that end by themselves and hold no process-wide
 * state (not {@code run}, {@code demo}, {@code coordinator}, {@code agent}, {@code daemon}, which start services, nor
 * {@code capture} and {@code restore}, which trace and start processes). Tests about what only a process shows
 * (its exit status, its environment, its JVM options, its log set-up, being killed) start children
 * ({@link FerryProcess#builder}); {@code -Dferry.it.in-process=off} runs every command in a child again.
 *
 * <p>What a command prints goes to its own out and err: through the invocation's writers, and what it writes to
 * {@code System.out} or {@code System.err} on its thread or threads started from it (routed by an inheritable
 * thread-local: {@link Routed}). Logging is this test JVM's ({@code src/test/logback-in-process.xml}), as a daemon's
 * commands log as the daemon set it up.
 */
final class InProcessFerry {
    private static final Set<String> SERVICES = Set.of("run", "demo", "coordinator", "agent", "daemon", "capture",
            "restore", "rank");

    private InProcessFerry() {}

    /**
     * Whether {@code args} may run here: a short command that sets no log level (logging is this JVM's, as a daemon's
     * client's is the daemon's: {@code ThinClient} sends such a command to a JVM of its own), and in-process runs not
     * turned off.
     */
    static boolean serves(List<String> args) {
        return !args.isEmpty() && !SERVICES.contains(args.get(0))
                && args.stream().noneMatch(a -> a.startsWith("--log-level") || a.contains("log.level."))
                && !"off".equals(System.getProperty("ferry.it.in-process", "on"));
    }

    static FerryProcess.Result run(String... args) {
        Routed.install();
        ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
        ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
        int exit;
        // One buffer per stream: the invocation's writer and System.out (or err) land in it in the order written.
        try (PrintWriter out = writer(outBytes); PrintWriter err = writer(errBytes)) {
            Invocation inv = Invocation.client(Path.of("").toAbsolutePath(), false, out, err);
            exit = Routed.to(outBytes, errBytes, () -> {
                try {
                    return Main.run(inv, args);
                } finally {
                    out.flush();
                    err.flush();
                }
            });
        }
        return new FerryProcess.Result(exit, outBytes.toString(StandardCharsets.UTF_8),
                errBytes.toString(StandardCharsets.UTF_8));
    }

    private static PrintWriter writer(OutputStream to) {
        return new PrintWriter(new OutputStreamWriter(to, StandardCharsets.UTF_8), true);
    }

    /**
     * {@code System.out} and {@code System.err} of this JVM, installed once: each write goes where the writing
     * thread's command sends its output (a thread started by a command inherits its command's, and a pool thread a
     * command left behind keeps writing to that command's buffer, which nobody reads again), else where the JVM's
     * own streams went.
     */
    static final class Routed extends OutputStream {
        private static final InheritableThreadLocal<OutputStream[]> TARGET = new InheritableThreadLocal<>();
        private static boolean installed;
        private final OutputStream original;
        private final int which;

        private Routed(OutputStream original, int which) {
            this.original = original;
            this.which = which;
        }

        static synchronized void install() {
            if (!installed) {
                System.setOut(new PrintStream(new Routed(System.out, 0), true, StandardCharsets.UTF_8));
                System.setErr(new PrintStream(new Routed(System.err, 1), true, StandardCharsets.UTF_8));
                installed = true;
            }
        }

        static int to(OutputStream out, OutputStream err, IntSupplier body) {
            OutputStream[] before = TARGET.get();
            TARGET.set(new OutputStream[]{out, err});
            try {
                return body.getAsInt();
            } finally {
                TARGET.set(before);
            }
        }

        private OutputStream target() {
            OutputStream[] t = TARGET.get();
            return t == null ? original : t[which];
        }

        @Override
        public void write(int b) throws IOException {
            OutputStream t = target();
            synchronized (t) {
                t.write(b);
            }
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            OutputStream t = target();
            synchronized (t) {
                t.write(b, off, len);
            }
        }

        @Override
        public void flush() throws IOException {
            target().flush();
        }
    }
}
