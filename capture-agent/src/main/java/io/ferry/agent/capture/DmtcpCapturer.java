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
 * ({@code dmtcp_command --bcheckpoint}) and moves everything DMTCP wrote for it into the
 * image: the {@code ckpt_*.dmtcp} files, the {@code ckpt_*_files} directories beside them
 * (copies of the files the rank had open, {@code --ckpt-open-files}) and the restart script.
 * Restart: {@code dmtcp_restart} on those files, with a fresh coordinator whose port is
 * written where the next capture reads it. DMTCP can only capture processes started under
 * it, so there is no one-off capture of an arbitrary pid. Stateless.
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
        Path area = area(rankDir);
        // --ckpt-open-files: the files the rank writes roll back with it (an appended log is cut back
        // to its length at the checkpoint instead of getting the lines after it twice); DMTCP puts
        // them back on restart only when allowed to overwrite them.
        List<String> out = new ArrayList<>(List.of("dmtcp_launch", "--new-coordinator", "--coord-port", "0",
                "--port-file", area.resolve("port").toString(), "--ckptdir", area.toString(), "--no-gzip",
                "--ckpt-open-files", "--allow-file-overwrite"));
        out.addAll(command);
        return out;
    }

    /**
     * The rank's DMTCP directory, created: absolute, because DMTCP records the path of its
     * {@code ckpt_*_files} directory at the checkpoint and looks there on restart.
     */
    private static Path area(Path rankDir) {
        Path area = rankDir.toAbsolutePath().resolve("dmtcp");
        try {
            io.ferry.model.OwnerOnly.createDirectories(area);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("cannot prepare " + area + " for dmtcp", e);
        }
        return area;
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
        Path area = rankDir.toAbsolutePath().resolve("dmtcp");
        String port = port(area.resolve("port"), pid);
        awaitRunning(port, pid);
        long[] bytes = new long[1];
        long[] stall = new long[1];
        ImageDirs.fill(dir, partial -> {
            // The stall: a blocking checkpoint returns once every process wrote its image and runs again;
            // moving the files into the image and fsyncing them happen while the rank runs.
            long t0 = System.nanoTime();
            ExternalTool.Result r = ExternalTool.run(List.of("dmtcp_command", "--coord-port", port, "--bcheckpoint"),
                    CriuCapturer.TIMEOUT);
            stall[0] = System.nanoTime() - t0;
            if (r.exit() != 0) {
                throw new IOException("dmtcp_command --bcheckpoint failed (exit " + r.exit() + "): " + r.lastLines(3));
            }
            int moved = 0;
            // The ckpt_*_files directories too: dmtcp_restart refuses to start without the copies in them.
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(area, "{ckpt_*.dmtcp,ckpt_*_files,dmtcp_restart_script*.sh}")) {
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
        Duration took = Duration.ofNanos(stall[0]);
        return new Captured(took, bytes[0], String.format(java.util.Locale.ROOT,
                "dmtcp checkpoint of process %d: %.1f MiB, stopped %.3f s", pid, bytes[0] / 1048576.0, took.toNanos() / 1e9));
    }

    /**
     * Waits until the rank's coordinator says its computation runs with at least one process:
     * right after a restart the coordinator listens before the restored processes joined it, and
     * a checkpoint asked then fails ("computation not in running state").
     */
    private static void awaitRunning(String port, long pid) throws IOException {
        long until = System.nanoTime() + PORT_PATIENCE.toNanos();
        while (true) {
            ExternalTool.Result r = ExternalTool.run(List.of("dmtcp_command", "--coord-port", port, "--status"),
                    PORT_PATIENCE);
            if (r.exit() == 0 && r.output().contains("RUNNING=yes") && !r.output().contains("NUM_PEERS=0")) {
                return;
            }
            if (System.nanoTime() > until || ProcessHandle.of(pid).map(h -> !h.isAlive()).orElse(true)) {
                throw new IOException("the DMTCP coordinator on port " + port + " of process " + pid + " says no running"
                        + " computation" + (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false) ? " within "
                        + PORT_PATIENCE.toSeconds() + " s" : " before the process ended") + ": " + r.lastLines(3));
            }
            pause(50);
        }
    }

    private static String exitCode(Process p) {
        try {
            return Integer.toString(p.waitFor());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    private static void pause(long millis) throws java.io.InterruptedIOException {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted waiting for a DMTCP coordinator");
        }
    }

    /** How long a capture waits for a just-started coordinator to write its port, and for its processes to join it. */
    static final Duration PORT_PATIENCE = Duration.ofSeconds(30);

    /**
     * The port in {@code file}, waiting while it is not written yet: a capture may come right
     * after a launch or restart, before the new coordinator listens.
     */
    private static String port(Path file, long pid) throws IOException {
        long until = System.nanoTime() + PORT_PATIENCE.toNanos();
        while (true) {
            String port = Files.exists(file) ? Files.readString(file).trim() : "";
            if (!port.isEmpty()) {
                return port;
            }
            if (System.nanoTime() > until || ProcessHandle.of(pid).map(h -> !h.isAlive()).orElse(true)) {
                throw new IOException("the DMTCP coordinator of process " + pid + " wrote no port into " + file
                        + (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false) ? " within "
                        + PORT_PATIENCE.toSeconds() + " s" : " before the process ended"));
            }
            pause(20);
        }
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

    /**
     * {@code dmtcp_restart} of the image's checkpoint files with a new coordinator, its port
     * written to {@code <rankDir>/dmtcp/port} and its next checkpoints going to that directory,
     * as after {@code dmtcp_launch}. The image's {@code ckpt_*_files} directories are copied
     * (not linked: DMTCP rewrites them in place at the next checkpoint) to where DMTCP wrote
     * them, the rank's DMTCP directory, which is the same path when the rank restarts under the
     * same Ferry home, on this node or another.
     */
    @Override
    public Process restore(Path imageDir, Path rankDir, ProcessBuilder rank) throws IOException {
        Path area = area(rankDir);
        List<String> cmd = new ArrayList<>(List.of("dmtcp_restart", "--new-coordinator", "--coord-port", "0",
                "--port-file", area.resolve("port").toString(), "--ckptdir", area.toString()));
        int images = 0;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(imageDir, "ckpt_*")) {
            for (Path p : ds) {
                if (Files.isDirectory(p)) {
                    ImageDirs.copyTree(p, area.resolve(p.getFileName()));
                } else if (p.getFileName().toString().endsWith(".dmtcp")) {
                    cmd.add(p.toAbsolutePath().toString());
                    images++;
                }
            }
        }
        if (images == 0) {
            throw new RestartRefusedException("no ckpt_*.dmtcp file in " + imageDir + ": not a dmtcp image", null);
        }
        // In the rank's DMTCP directory: the new coordinator writes its restart script into its working
        // directory, and the next capture takes it from there. DMTCP restores the rank's own working directory.
        Process p = rank.command(cmd).directory(area.toFile()).start();
        // Returned only once the restored processes run: a dmtcp_restart that refuses the image (exit 99,
        // "Unable to find checkpointed copy of file") is a restore that failed, which rolls the job back to an
        // older generation, not a crash of the rank, which would roll it back to this image again.
        try {
            awaitRunning(port(area.resolve("port"), p.pid()), p.pid());
        } catch (IOException e) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            throw new RestartRefusedException("dmtcp_restart refused the image " + imageDir + (p.isAlive() ? "" : " (exit "
                    + exitCode(p) + ")") + ": its processes did not run again (DMTCP said why on the agent's standard "
                    + "error, just before this); " + e.getMessage(), e);
        }
        return p;
    }

    @Override
    public boolean restores() {
        return true;
    }
}
