package io.ferry.agent;

import io.ferry.agent.protocol.Line;
import io.ferry.model.Event;
import io.ferry.model.OwnerOnly;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * One running rank: its process, its checkpoint area, and the way it talks (socket once it
 * said HELLO, signal otherwise). The process is the agent's child, or one the site's
 * launcher started that registered with the agent ({@code ferry rank}): then its exit code
 * is not the agent's to know. Thread-safe: the control server and the agent both call it.
 */
public final class RankProcess {
    private final int rank;
    private final ProcessHandle process;
    /** The agent's child, or null for a rank the launcher started. */
    private final Process child;
    private final Path ckptDir;
    private final String signal;
    private volatile SocketChannel channel;
    private final Object attaching = new Object();
    private CompletableFuture<Line> pending;
    private long pendingGeneration = -1;
    private final long startedNanos = System.nanoTime();
    /** See {@link Quiesce#helloGrace()}. */
    private volatile Duration helloGrace = Duration.ZERO;

    RankProcess(int rank, Process child, Path ckptDir, String signal) {
        this(rank, child.toHandle(), child, ckptDir, signal);
    }

    /** A rank the site's launcher started, adopted by its process id. */
    RankProcess(int rank, ProcessHandle adopted, Path ckptDir, String signal) {
        this(rank, adopted, null, ckptDir, signal);
    }

    private RankProcess(int rank, ProcessHandle process, Process child, Path ckptDir, String signal) {
        this.rank = rank;
        this.process = process;
        this.child = child;
        this.ckptDir = ckptDir;
        this.signal = signal;
        // Once per process, not per checkpoint: a rank that dies fails whatever request is pending.
        onExit().thenRun(this::exited);
    }

    private synchronized void exited() {
        if (pending != null) {
            pending.complete(new Line.Fail(pendingGeneration, "rank " + rank + " exited"
                    + (child != null ? " with " + child.exitValue() : "") + " during the checkpoint"));
        }
    }

    public int rank() {
        return rank;
    }

    public ProcessHandle process() {
        return process;
    }

    /** Completes when the process has ended. */
    public CompletableFuture<?> onExit() {
        return child != null ? child.onExit() : process.onExit();
    }

    /**
     * Its exit code once ended, or {@link io.ferry.model.Event.RankExited#UNKNOWN_EXIT} for a rank
     * the launcher started.
     */
    public int exitCode() {
        return child != null ? child.exitValue() : Event.RankExited.UNKNOWN_EXIT;
    }

    public boolean socketMode() {
        return channel != null;
    }

    /** Takes {@code ch} as the rank's channel; false, and nothing changes, while another one is open. */
    boolean attach(SocketChannel ch) {
        synchronized (attaching) { // not the rank's monitor: request() holds that while it waits for a HELLO
            if (channel != null && channel.isOpen() && channel != ch) {
                return false;
            }
            channel = ch;
            return true;
        }
    }

    /** The rank's private work area (its generation directories live under it). */
    Path area() {
        return ckptDir;
    }

    /** The directory a generation's files go to before they move into the cache. */
    Path generationDir(long generation) {
        return ckptDir.resolve(Long.toString(generation));
    }

    /** Asks the rank for generation {@code g}; the future completes with its DONE or FAIL. */
    synchronized CompletableFuture<Line> request(long g, ScheduledExecutorService poller) throws IOException {
        Path dir = generationDir(g);
        OwnerOnly.createDirectories(dir); // becomes the image directory in the cache
        pending = new CompletableFuture<>();
        pendingGeneration = g;
        CompletableFuture<Line> answer = pending;
        awaitHelloGrace();
        SocketChannel ch = channel;
        if (ch != null) {
            ByteBuffer b = ByteBuffer.wrap((new Line.Checkpoint(g, dir.toString()).encode() + "\n")
                    .getBytes(StandardCharsets.US_ASCII));
            try {
                synchronized (ch) {
                    while (b.hasRemaining()) {
                        ch.write(b);
                    }
                }
            } catch (IOException e) {
                answer.complete(new Line.Fail(g, "rank " + rank + " closed its connection to the agent (" + e + ")"));
                return answer;
            }
        } else {
            if (Boolean.FALSE.equals(catchesSignal())) {
                // Signalling it would end it: Ferry never kills its own ranks. The capture fails and says why.
                answer.complete(new Line.Fail(g, "rank " + rank + " (pid " + process.pid() + ") neither connected nor"
                        + " catches SIG" + signal + " " + helloGrace.toSeconds() + " s after it started: not signalled,"
                        + " which would end it (a signal-mode program installs its handler first, docs/protocol.md)"));
                return answer;
            }
            Path tmp = ckptDir.resolve(".REQUEST.tmp");
            Files.writeString(tmp, g + "\n");
            Files.move(tmp, ckptDir.resolve("REQUEST"), StandardCopyOption.ATOMIC_MOVE,
                    StandardCopyOption.REPLACE_EXISTING);
            Process kill = new ProcessBuilder("kill", "-s", signal, Long.toString(process.pid())).start();
            try {
                if (kill.waitFor() != 0) {
                    answer.complete(new Line.Fail(g, "cannot signal rank " + rank + " (pid " + process.pid() + ")"));
                    return answer;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted signalling rank " + rank, e);
            }
            Path done = dir.resolve("DONE");
            var task = poller.scheduleWithFixedDelay(() -> {
                if (Files.exists(done)) {
                    answer.complete(new Line.Done(g));
                }
            }, 10, 10, TimeUnit.MILLISECONDS);
            answer.whenComplete((l, t) -> task.cancel(false));
        }
        if (!process.isAlive()) {
            exited();
        }
        return answer;
    }

    RankProcess withHelloGrace(Duration grace) {
        this.helloGrace = grace;
        return this;
    }

    /**
     * Within the HELLO grace of its start, waits for a live rank's HELLO, unless it already
     * catches the signal (a signal-mode program that installed its handler: no need to wait).
     * A JVM catches SIGUSR2 for itself and dies of an outside one: it is always waited for.
     */
    private void awaitHelloGrace() throws IOException {
        long until = startedNanos + helloGrace.toNanos();
        while (channel == null && process.isAlive() && System.nanoTime() < until
                && !Boolean.TRUE.equals(catchesSignal())) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted waiting for rank " + rank + " to connect");
            }
        }
    }

    /**
     * Whether the rank's process catches the protocol's signal (Linux: SigCgt in /proc/PID/status)
     * and is not a JVM (a JVM catches SIGUSR2 for itself and dies of an outside one); null when
     * that cannot be read (gone, or not Linux): then it is signalled, as before this check.
     */
    private Boolean catchesSignal() {
        Integer signum = SIGNALS.get(signal);
        if (signum == null) {
            return null;
        }
        try {
            Path proc = Path.of("/proc", Long.toString(process.pid()));
            if (Files.readSymbolicLink(proc.resolve("exe")).getFileName().toString().equals("java")) {
                return false;
            }
            for (String line : Files.readAllLines(proc.resolve("status"))) {
                if (line.startsWith("SigCgt:")) {
                    return new BigInteger(line.substring(7).trim(), 16).testBit(signum - 1);
                }
            }
        } catch (IOException | RuntimeException unreadable) {
            return null;
        }
        return null;
    }

    /** Linux signal numbers of the signals a signal-mode rank may use. */
    private static final Map<String, Integer> SIGNALS = Map.of("HUP", 1, "INT", 2, "QUIT", 3,
            "USR1", 10, "USR2", 12, "ALRM", 14, "TERM", 15, "CONT", 18, "URG", 23, "WINCH", 28);

    /** An answer from the socket: completes the pending request of the same generation. */
    synchronized void answer(Line line) {
        long g = line instanceof Line.Done d ? d.generation() : ((Line.Fail) line).generation();
        if (pending != null && g == pendingGeneration) {
            pending.complete(line);
        }
    }
}
