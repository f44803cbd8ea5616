package io.ferry.agent.capture;

import io.ferry.staging.Progress;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The {@code criu} method: runs {@code criu dump --leave-running} on the rank's process tree
 * into the image directory, and restarts with {@code criu restore}. Ranks are launched under
 * {@code setsid -w -f} (their own session, as CRIU wants for {@code --shell-job}). Available
 * where {@code criu} is installed and {@code criu check} passes (it needs root). The stall is
 * bounded by the dump's wall time: CRIU freezes the tree for the whole dump. Stateless.
 */
public final class CriuCapturer implements Capturer {
    static final Duration TIMEOUT = Duration.ofMinutes(30);
    private static final List<String> SHARED = List.of("--shell-job", "--ext-unix-sk", "--tcp-established", "--file-locks");

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
                    : Optional.of("`criu check` fails on this machine (kernel " + System.getProperty("os.version") + "): "
                            + r.lastLines(3));
        } catch (IOException e) {
            return Optional.of("cannot run criu: " + e.getMessage());
        }
    }

    @Override
    public List<String> launchCommand(List<String> command, Path rankDir) {
        return new ProcCapturer().launchCommand(command, rankDir);
    }

    @Override
    public Optional<Long> target(long launchedPid) {
        return new ProcCapturer().target(launchedPid);
    }

    @Override
    public Captured capture(long pid, Path rankDir, Path dir, Progress progress) throws IOException {
        String criu = ExternalTool.onPath("criu").orElseThrow(() -> new IOException("criu is not installed")).toString();
        long[] bytes = new long[1];
        long t0 = System.nanoTime();
        ImageDirs.fill(dir, partial -> {
            List<String> cmd = new ArrayList<>(List.of(criu, "dump", "--tree", Long.toString(pid), "--images-dir",
                    partial.toString(), "--leave-running"));
            cmd.addAll(SHARED);
            ExternalTool.Result r = ExternalTool.run(cmd, TIMEOUT);
            if (r.exit() != 0) {
                throw new IOException("criu dump of process " + pid + " failed (exit " + r.exit() + "): " + r.lastLines(3));
            }
            bytes[0] = ImageDirs.size(partial);
        });
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        return new Captured(took, bytes[0], String.format(java.util.Locale.ROOT,
                "criu dump of process tree %d: %.1f MiB in %.3f s (the tree was frozen for at most that long)", pid,
                bytes[0] / 1048576.0, took.toNanos() / 1e9));
    }

    @Override
    public Optional<List<String>> restartCommand(Path imageDir) {
        List<String> cmd = new ArrayList<>(List.of("criu", "restore", "--images-dir", imageDir.toString(), "--restore-detached"));
        cmd.addAll(SHARED);
        return Optional.of(cmd);
    }

    @Override
    public boolean restores() {
        return true;
    }
}
