package io.ferry.agent.capture;

import io.ferry.staging.Progress;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The {@code dmtcp} method: each rank runs under {@code dmtcp_launch} with a coordinator of
 * its own (port written to {@code <rankDir>/dmtcp/port}) and its checkpoint directory in
 * {@code <rankDir>/dmtcp}; a capture asks that coordinator for a blocking checkpoint
 * ({@code dmtcp_command --bcheckpoint}) and moves the {@code ckpt_*.dmtcp} files it wrote,
 * and its restart script, into the image. Restart: {@code dmtcp_restart} on those files.
 * DMTCP can only capture processes started under it, so there is no one-off capture of an
 * arbitrary pid. Stateless.
 */
public final class DmtcpCapturer implements Capturer {
    @Override
    public String method() {
        return "dmtcp";
    }

    @Override
    public Optional<String> unavailable() {
        for (String tool : List.of("dmtcp_launch", "dmtcp_command", "dmtcp_restart")) {
            if (ExternalTool.onPath(tool).isEmpty()) {
                return Optional.of(tool + " is not installed (DMTCP has no Debian 12 package; sites build it from "
                        + "github.com/dmtcp/dmtcp)");
            }
        }
        return Optional.empty();
    }

    @Override
    public List<String> launchCommand(List<String> command, Path rankDir) {
        Path area = rankDir.resolve("dmtcp");
        try {
            io.ferry.model.OwnerOnly.createDirectories(area);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("cannot prepare " + area + " for dmtcp", e);
        }
        List<String> out = new ArrayList<>(List.of("dmtcp_launch", "--new-coordinator", "--coord-port", "0",
                "--port-file", area.resolve("port").toString(), "--ckptdir", area.toString(), "--no-gzip"));
        out.addAll(command);
        return out;
    }

    @Override
    public Optional<Long> target(long launchedPid) {
        return Optional.of(launchedPid);
    }

    @Override
    public Captured capture(long pid, Path rankDir, Path dir, Progress progress) throws IOException {
        if (rankDir == null) {
            throw new IllegalArgumentException("dmtcp captures only ranks started under dmtcp_launch: use "
                    + "`ferry run --capture dmtcp`");
        }
        Path area = rankDir.resolve("dmtcp");
        String port = Files.readString(area.resolve("port")).trim();
        long[] bytes = new long[1];
        long t0 = System.nanoTime();
        ImageDirs.fill(dir, partial -> {
            ExternalTool.Result r = ExternalTool.run(List.of("dmtcp_command", "--coord-port", port, "--bcheckpoint"),
                    CriuCapturer.TIMEOUT);
            if (r.exit() != 0) {
                throw new IOException("dmtcp_command --bcheckpoint failed (exit " + r.exit() + "): " + r.lastLines(3));
            }
            int moved = 0;
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(area, "{ckpt_*.dmtcp,dmtcp_restart_script*.sh}")) {
                for (Path p : ds) {
                    Files.move(p, partial.resolve(p.getFileName()));
                    moved += p.getFileName().toString().endsWith(".dmtcp") ? 1 : 0;
                }
            }
            if (moved == 0) {
                throw new IOException("dmtcp wrote no ckpt_*.dmtcp file into " + area);
            }
            bytes[0] = ImageDirs.size(partial);
        });
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        return new Captured(took, bytes[0], String.format(java.util.Locale.ROOT,
                "dmtcp checkpoint of process %d: %.1f MiB in %.3f s", pid, bytes[0] / 1048576.0, took.toNanos() / 1e9));
    }

    @Override
    public Optional<List<String>> restartCommand(Path imageDir) {
        List<String> cmd = new ArrayList<>(List.of("dmtcp_restart", "--new-coordinator", "--coord-port", "0"));
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(imageDir, "ckpt_*.dmtcp")) {
            ds.forEach(p -> cmd.add(p.toString()));
        } catch (IOException e) {
            return Optional.empty();
        }
        return Optional.of(cmd);
    }

    @Override
    public boolean restores() {
        return true;
    }
}
