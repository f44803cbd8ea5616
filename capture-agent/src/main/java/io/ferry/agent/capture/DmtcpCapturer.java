package io.ferry.agent.capture;

import io.ferry.staging.Progress;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The {@code dmtcp} method, as DMTCP's papers use it: the ranks of a job on this node run under
 * {@code dmtcp_launch}, all joined to one {@code dmtcp_coordinator} the agent starts for them
 * ({@link DmtcpCoordinator}), each with its checkpoint directory in {@code <rankDir>/dmtcp}. A
 * generation is one blocking checkpoint of them all ({@code dmtcp_command --bcheckpoint}), so the
 * sockets between them are drained and restored with them; each rank's capture then moves
 * everything DMTCP wrote for it into its image: the {@code ckpt_*.dmtcp} files, the
 * {@code ckpt_*_files} directories beside them (copies of the files the rank had open,
 * {@code --ckpt-open-files}) and a copy of the coordinator's restart script. Restart: every rank's
 * images through its own {@code dmtcp_restart}, all joined to a fresh coordinator, which resumes
 * them together once every one is back. DMTCP can only capture processes started under it, so
 * there is no one-off capture of an arbitrary pid. Ranks on other nodes have coordinators of
 * their own (one per node and job). One instance per job on a node; its state is guarded by
 * {@code this}, and no lock is held while a DMTCP command runs.
 */
public final class DmtcpCapturer implements Capturer {
    /** This launch's coordinator, null before the first launch and after {@link #stopped}. */
    private DmtcpCoordinator coordinator;
    /** The DMTCP directories of the ranks started under {@link #coordinator}. */
    private final Set<Path> areas = new LinkedHashSet<>();
    /** The processes started under it: a restore that one of them gives up on ends the wait for all. */
    private final List<Process> members = new ArrayList<>();
    /** The DMTCP directories whose files from the last checkpoint are still to be collected. */
    private final Set<Path> pending = new HashSet<>();
    private Duration lastStall = Duration.ZERO;

    @Override
    public String method() {
        return "dmtcp";
    }

    @Override
    public Optional<String> unavailable() {
        for (String tool : List.of("dmtcp_launch", "dmtcp_command", "dmtcp_restart", "dmtcp_coordinator")) {
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
        List<String> out = new ArrayList<>(List.of("dmtcp_launch"));
        out.addAll(join(rankDir, area));
        out.addAll(List.of("--ckptdir", area.toString(), "--no-gzip", "--ckpt-open-files", "--allow-file-overwrite"));
        out.addAll(command);
        return out;
    }

    /** The options joining this launch's coordinator, started now if there is none (or it ended). */
    private synchronized List<String> join(Path rankDir, Path area) {
        if (coordinator == null || !coordinator.alive()) {
            try {
                coordinator = DmtcpCoordinator.start(rankDir.toAbsolutePath().getParent().resolve(".dmtcp-coordinator"));
            } catch (IOException e) {
                throw new UncheckedIOException("cannot start the job's DMTCP coordinator", e);
            }
            areas.clear();
            members.clear();
            pending.clear();
        }
        areas.add(area);
        return coordinator.joinOptions();
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
            throw new UncheckedIOException("cannot prepare " + area + " for dmtcp", e);
        }
        return area;
    }

    @Override
    public Optional<Long> target(long launchedPid) {
        return Optional.of(launchedPid);
    }

    @Override
    public void started(boolean restored, Runnable lost) throws IOException {
        DmtcpCoordinator c;
        int peers;
        List<Process> started;
        synchronized (this) {
            c = coordinator;
            peers = areas.size();
            started = List.copyOf(members);
        }
        if (c == null) {
            return;
        }
        if (restored) {
            // A dmtcp_restart that refuses its image (exit 99, "Unable to find checkpointed copy of file") is a
            // restore that failed, which rolls the job back to an older generation, not a crash of the rank, which
            // would roll it back to this image again.
            try {
                c.awaitRunning(peers, () -> started.stream().allMatch(Process::isAlive));
            } catch (IOException e) {
                throw new RestartRefusedException("dmtcp_restart refused the images of this node's " + peers + " rank(s)"
                        + started.stream().filter(p -> !p.isAlive()).findFirst().map(p -> " (exit " + p.exitValue() + ")")
                        .orElse("") + ": they did not run again (DMTCP said why on the agent's standard error, just before"
                        + " this); " + e.getMessage(), e);
            }
        }
        c.onLost(lost);
    }

    @Override
    public void stopped() {
        DmtcpCoordinator c;
        synchronized (this) {
            c = coordinator;
            coordinator = null;
            areas.clear();
            members.clear();
            pending.clear();
        }
        if (c != null) {
            c.close();
        }
    }

    @Override
    public Optional<Duration> checkpointTogether(Duration timeout) throws IOException {
        DmtcpCoordinator c;
        List<Path> all;
        List<Process> started;
        synchronized (this) {
            c = coordinator;
            all = List.copyOf(areas);
            started = List.copyOf(members);
        }
        if (c == null) {
            throw new IOException("no rank of this job runs under a DMTCP coordinator of this agent");
        }
        for (Path area : all) { // what a checkpoint whose collection failed left: never mixed into this one
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(area, "{ckpt_*,dmtcp_restart_script*}")) {
                for (Path p : ds) {
                    ImageDirs.delete(p);
                }
            }
        }
        // Right after a launch or restart the coordinator listens before every process joined it, and a
        // checkpoint asked then would leave a rank out ("computation not in running state").
        c.awaitRunning(all.size(), () -> started.stream().allMatch(Process::isAlive));
        // The stall: a blocking checkpoint returns once every process wrote its image and runs again; moving
        // the files into the images and fsyncing them happen while the ranks run.
        Duration stall = c.checkpoint(timeout);
        Path script = newestScript(c);
        for (Path area : all) {
            if (script != null) {
                Files.copy(script, area.resolve(script.getFileName()));
            }
        }
        synchronized (this) {
            if (coordinator == c) {
                pending.clear();
                pending.addAll(all);
                lastStall = stall;
            }
        }
        return Optional.of(stall);
    }

    /** The restart script the coordinator wrote at its last checkpoint (not the link to it), or null. */
    private static Path newestScript(DmtcpCoordinator c) throws IOException {
        Path newest = null;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(c.dir(), "dmtcp_restart_script_*.sh")) {
            for (Path p : ds) {
                if (!Files.isSymbolicLink(p) && (newest == null
                        || Files.getLastModifiedTime(p).compareTo(Files.getLastModifiedTime(newest)) > 0)) {
                    newest = p;
                }
            }
        }
        return newest;
    }

    @Override
    public Captured capture(long pid, Path rankDir, Path dir, Progress progress) throws IOException {
        if (rankDir == null) {
            throw new IllegalArgumentException("dmtcp captures only ranks started under dmtcp_launch: use "
                    + "`ferry run --capture dmtcp`");
        }
        Path area = rankDir.toAbsolutePath().resolve("dmtcp");
        boolean taken;
        synchronized (this) {
            taken = pending.contains(area);
        }
        if (!taken) { // a caller that captures ranks one by one: the checkpoint takes every rank of the node
            checkpointTogether(CriuCapturer.TIMEOUT);
        }
        long[] bytes = new long[1];
        ImageDirs.fill(dir, partial -> {
            int moved = 0;
            // The ckpt_*_files directories too: dmtcp_restart refuses to start without the copies in them.
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(area, "{ckpt_*.dmtcp,ckpt_*_files,dmtcp_restart_script*.sh}")) {
                for (Path p : ds) {
                    Files.move(p, partial.resolve(p.getFileName()));
                    moved += p.getFileName().toString().endsWith(".dmtcp") ? 1 : 0;
                }
            }
            if (moved == 0) {
                throw new IOException("dmtcp wrote no ckpt_*.dmtcp file into " + area + " (process " + pid + ")");
            }
            bytes[0] = ImageDirs.size(partial);
        });
        Duration took;
        synchronized (this) {
            pending.remove(area);
            took = lastStall;
        }
        return new Captured(took, bytes[0], String.format(java.util.Locale.ROOT,
                "dmtcp checkpoint of process %d: %.1f MiB, stopped %.3f s", pid, bytes[0] / 1048576.0, took.toNanos() / 1e9));
    }

    /** The pid of this launch's coordinator, or -1 (for tests that make it crash). */
    synchronized long coordinatorPid() {
        return coordinator == null ? -1 : coordinator.pid();
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
     * {@code dmtcp_restart} of the image's checkpoint files, joined to this launch's coordinator
     * (started now for the first rank), its next checkpoints going to the rank's DMTCP directory,
     * as after {@code dmtcp_launch}. The image's {@code ckpt_*_files} directories are copied (not
     * linked: DMTCP rewrites them in place at the next checkpoint) to where DMTCP wrote them, the
     * rank's DMTCP directory, which is the same path when the rank restarts under the same Ferry
     * home, on this node or another. Returns at once: the restored processes resume only once
     * every rank of the node joined; {@link #started} waits for that.
     */
    @Override
    public Process restore(Path imageDir, Path rankDir, ProcessBuilder rank) throws IOException {
        Path area = area(rankDir);
        List<String> cmd = new ArrayList<>(List.of("dmtcp_restart"));
        cmd.addAll(join(rankDir, area));
        cmd.addAll(List.of("--ckptdir", area.toString()));
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
        // In the rank's DMTCP directory: DMTCP restores the rank's own working directory.
        Process p = rank.command(cmd).directory(area.toFile()).start();
        synchronized (this) {
            members.add(p);
        }
        return p;
    }

    @Override
    public boolean restores() {
        return true;
    }
}
