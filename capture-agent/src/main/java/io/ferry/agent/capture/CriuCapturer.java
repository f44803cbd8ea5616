package io.ferry.agent.capture;

import io.ferry.agent.capture.internal.Libc;
import io.ferry.staging.Progress;

import java.io.File;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The {@code criu} method: {@code criu dump --tree} of the rank's process tree into the image
 * directory, leaving the tree stopped while Ferry copies the regular files it has open for
 * writing into the image ({@link CriuFiles}), then resuming it; restart is {@code criu restore}
 * after those files are put back, so a file the rank writes rolls back with it (CRIU itself
 * refuses a file whose size changed since the dump, or, if it is an append-only log, reopens it
 * as it grew). Ranks are launched under {@code setsid}
 * (their own session, which CRIU restores), reading {@code /dev/null}, writing to pipes the
 * agent owns ({@link #ownsStreams}): a restore hands new pipes to the restored tree in their
 * place ({@code --inherit-fd}). Available where {@code criu} is installed and {@code criu check}
 * passes (it needs root). The stall is the dump's and the file copy's wall time. Stateless.
 */
public final class CriuCapturer implements Capturer {
    static final Duration TIMEOUT = Duration.ofMinutes(30);
    /** How long a restore waits for the pids of the image's processes to be free (killed ones to be reaped). */
    static final Duration PID_PATIENCE = Duration.ofSeconds(10);
    private static final List<String> SHARED = List.of("--shell-job", "--ext-unix-sk", "--tcp-established",
            "--file-locks");

    @Override
    public String method() {
        return "criu";
    }

    @Override
    public Optional<String> unavailable() {
        Optional<Path> criu = ExternalTool.onPath("criu");
        if (criu.isEmpty()) {
            return Optional.of("criu is not installed (not on PATH nor in /usr/sbin)");
        }
        try {
            ExternalTool.Result r = ExternalTool.run(List.of(criu.get().toString(), "check"), Duration.ofMinutes(1));
            return r.exit() == 0 ? Optional.empty()
                    : Optional.of("`criu check` fails on this machine (kernel "
                            + System.getProperty("os.version") + "): "
                            + r.lastLines(3));
        } catch (IOException e) {
            return Optional.of("cannot run criu: " + e.getMessage());
        }
    }

    /**
     * {@code setsid} without a fork: a child of the JVM is not a process-group leader, so
     * setsid makes it a session leader and execs the program in place; the launched process is
     * the rank, as it is after a restore.
     */
    @Override
    public List<String> launchCommand(List<String> command, Path rankDir) {
        List<String> out = new ArrayList<>(List.of("setsid"));
        out.addAll(command);
        return out;
    }

    @Override
    public Optional<Long> target(long launchedPid) {
        return ProcessHandle.of(launchedPid).filter(ProcessHandle::isAlive).map(ProcessHandle::pid);
    }

    @Override
    public boolean ownsStreams() {
        return true;
    }

    @Override
    public Captured capture(long pid, Path rankDir, Path dir, Progress progress) throws IOException {
        String criu = ExternalTool.onPath("criu")
                .orElseThrow(() -> new IOException("criu is not installed")).toString();
        long[] bytes = new long[1];
        long[] stall = new long[1];
        ImageDirs.fill(dir, partial -> {
            CriuFiles.recordStreams(pid, partial);
            List<String> cmd = new ArrayList<>(List.of(criu, "dump", "--tree", Long.toString(pid), "--images-dir",
                    partial.toString(), "--leave-stopped"));
            cmd.addAll(SHARED);
            long t0 = System.nanoTime();
            try {
                ExternalTool.Result r = ExternalTool.run(cmd, TIMEOUT);
                if (r.exit() != 0) {
                    throw new IOException("criu dump of process " + pid + " failed (exit " + r.exit() + "): "
                            + uncapturable(r.output()).orElse(r.errorLines(3)) + "; nothing of it is stored");
                }
                // Still stopped: the files are exactly as the dumped memory last wrote them.
                CriuFiles.saveWritten(pid, partial);
            } finally {
                CriuFiles.resume(pid); // never leave a rank stopped, whatever failed
                stall[0] = System.nanoTime() - t0;
            }
            bytes[0] = ImageDirs.size(partial);
        });
        Duration took = Duration.ofNanos(stall[0]);
        return new Captured(took, bytes[0], String.format(Locale.ROOT,
                "criu dump of process tree %d: %.1f MiB, stopped %.3f s", pid, bytes[0] / 1048576.0,
                took.toNanos() / 1e9));
    }

    private static final Pattern FOREIGN_FILE = Pattern.compile(
            "Can't dump file (\\d+) of that type \\[\\d+\\] \\((chr|blk) (\\d+):(\\d+)\\)");
    private static final Pattern DUMPING_PID =
            Pattern.compile("Dump files \\(pid: (\\d+)\\)");

    /**
     * What CRIU said it cannot capture, in plain words, where it said so: a device CRIU has no
     * driver for (a FUSE or GPU device, for example), named by the path the process opened it
     * under. Empty for any other failure.
     */
    static Optional<String> uncapturable(String criuOutput) {
        Matcher f = FOREIGN_FILE.matcher(criuOutput);
        if (!f.find()) {
            return Optional.empty();
        }
        Matcher p = DUMPING_PID.matcher(criuOutput);
        String who = p.find() ? p.group(1) : null;
        String path = "";
        if (who != null) {
            try {
                path = Files.readSymbolicLink(Path.of("/proc", who, "fd", f.group(1))) + ", ";
            } catch (IOException | UnsupportedOperationException gone) {
                path = ""; // the process closed it or ended since: the numbers still say what it was
            }
        }
        return Optional.of("process " + (who == null ? "?" : who) + " holds file descriptor " + f.group(1) + " open on "
                + path + "a " + (f.group(2).equals("chr") ? "character" : "block") + " device (" + f.group(3) + ":"
                + f.group(4) + ") CRIU cannot checkpoint: such a rank cannot be captured with --capture criu");
    }

    @Override
    public Optional<List<String>> restartCommand(Path imageDir) {
        List<String> cmd = new ArrayList<>(List.of("criu", "restore", "--images-dir", imageDir.toString(),
                "--restore-detached"));
        cmd.addAll(SHARED);
        return Optional.of(cmd);
    }

    /**
     * Puts back the files the image carries, then {@code criu restore --restore-detached
     * --restore-sibling}: the restored tree becomes this JVM's child, reaped by
     * {@link RestoredProcess}. Standard streams that were pipes at the dump are handed new pipes
     * whose other ends this JVM holds ({@code --inherit-fd}); the others are reopened by CRIU; the restore log goes to
     * {@code <rankDir>/criu-restore.log}.
     */
    @Override
    public Process restore(Path imageDir, Path rankDir, ProcessBuilder rank) throws IOException {
        String criu = ExternalTool.onPath("criu")
                .orElseThrow(() -> new IOException("criu is not installed")).toString();
        CriuFiles.putBack(imageDir);
        List<Long> taken = CriuFiles.awaitPidsFree(imageDir, PID_PATIENCE);
        if (!taken.isEmpty()) {
            throw new IOException("criu restore of " + imageDir + ": pids " + taken
                    + " of its processes are still taken "
                    + PID_PATIENCE.toSeconds() + " s on (CRIU restores every process under its own pid)");
        }
        Path log = rankDir.toAbsolutePath().resolve("criu-restore.log");
        Path pidFile = rankDir.toAbsolutePath().resolve("criu-restore.pid");
        List<String> cmd = new ArrayList<>(List.of(criu, "restore", "--images-dir",
                imageDir.toAbsolutePath().toString(),
                "--restore-detached", "--restore-sibling", "--pidfile", pidFile.toString(), "--log-file",
                log.toString()));
        cmd.addAll(SHARED);
        Map<String, int[]> pipes = new LinkedHashMap<>(); // the dump's pipe name -> a new pipe {read, write}
        InputStream[] reads = {InputStream.nullInputStream(), InputStream.nullInputStream()};
        Map<Integer, String> streams = CriuFiles.streams(imageDir);
        // Standard input is not handed back: with --shell-job CRIU keeps its own stdin for terminals, and
        // an inherited fd[0] is refused ("Can't place stdin fd to fdstore"). Ranks read /dev/null.
        rank.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        try {
            for (int fd = 1; fd <= 2; fd++) {
                String name = streams.getOrDefault(fd, "");
                if (!name.startsWith("pipe:")) {
                    continue; // a file or a terminal: CRIU reopens it itself
                }
                boolean fresh = !pipes.containsKey(name);
                int[] p = pipes.computeIfAbsent(name, n -> new int[2]);
                if (fresh) {
                    Libc.pipe2(p, Libc.O_CLOEXEC);
                    cmd.addAll(List.of("--inherit-fd", "fd[" + fd + "]:" + name));
                    reads[fd - 1] = new FileInputStream("/proc/self/fd/" + p[0]);
                }
                // The JDK opens this path for the restorer: a new descriptor of the pipe's write end.
                ProcessBuilder.Redirect to = ProcessBuilder.Redirect.to(new File("/proc/self/fd/" + p[1]));
                if (fd == 1) {
                    rank.redirectOutput(to);
                } else {
                    rank.redirectError(to);
                }
            }
            Process restorer = rank.command(cmd).start();
            try {
                if (!restorer.waitFor(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                    restorer.destroyForcibly();
                    throw new IOException("criu restore of " + imageDir + " did not finish within "
                            + TIMEOUT.toMinutes() + " min");
                }
            } catch (InterruptedException e) {
                restorer.destroyForcibly();
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted restoring " + imageDir);
            }
            if (restorer.exitValue() != 0) {
                throw new RestartRefusedException("criu restore of " + imageDir + " failed (exit "
                        + restorer.exitValue()
                        + "): " + new ExternalTool.Result(restorer.exitValue(), Files.exists(log)
                                ? Files.readString(log) : "")
                        .errorLines(4), null);
            }
            return new RestoredProcess(Long.parseLong(Files.readString(pidFile).trim()), reads[0], reads[1]);
        } catch (IOException | RuntimeException e) {
            for (InputStream in : reads) {
                in.close();
            }
            throw e;
        } finally {
            for (int[] p : pipes.values()) { // the restored tree and the read streams hold their own now
                for (int fd : p) {
                    if (fd > 0) {
                        Libc.close(fd);
                    }
                }
            }
        }
    }

    @Override
    public boolean restores() {
        return true;
    }
}
