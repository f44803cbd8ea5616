package io.ferry.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Who a command runs for: the directory its relative paths mean, whether its caller sits at a
 * terminal, and where its output goes. A command in its own JVM runs for that JVM's process
 * ({@link #process()}); one that {@code ferry daemon} serves runs for the client that sent it
 * ({@link DaemonServer}), on the thread that serves it. Commands read it through
 * {@link #current()} rather than {@code System.out} and {@code user.dir}, so that the same
 * command prints and resolves paths alike in both. Immutable; the current one is per thread.
 */
record Invocation(Path cwd, boolean console, PrintWriter out, PrintWriter err, boolean served) {
    private static final ThreadLocal<Invocation> CURRENT = new ThreadLocal<>();

    Invocation {
        Objects.requireNonNull(out);
        Objects.requireNonNull(err);
        if (!cwd.isAbsolute()) {
            throw new IllegalArgumentException("working directory must be absolute: " + cwd);
        }
    }

    /**
     * This JVM's own: its working directory, {@code System.console()}, and {@code System.out} and {@code err} as they
     * are now.
     */
    static Invocation process() {
        return new Invocation(Path.of("").toAbsolutePath(), System.console() != null, new PrintWriter(System.out, true),
                new PrintWriter(System.err, true), false);
    }

    /** A daemon's client's: {@code served} is true. */
    static Invocation client(Path cwd, boolean console, PrintWriter out, PrintWriter err) {
        return new Invocation(cwd, console, out, err, true);
    }

    /** The invocation this thread runs a command for: {@link #process()} unless a daemon set its client's. */
    static Invocation current() {
        Invocation i = CURRENT.get();
        return i != null ? i : process();
    }

    /** {@code path} as the caller meant it: relative paths against the caller's working directory. */
    Path resolve(String path) {
        return cwd.resolve(path).normalize();
    }

    /** Runs {@code body} on this thread for this invocation, then restores the one before. */
    <T> T run(Supplier<T> body) {
        Invocation before = CURRENT.get();
        CURRENT.set(this);
        try {
            return body.get();
        } finally {
            CURRENT.set(before);
        }
    }
}
