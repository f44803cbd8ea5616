package io.ferry.agent.capture;

import io.ferry.staging.Progress;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The {@code dmtcp} method, as DMTCP's papers use it: the ranks of a job run under
 * {@code dmtcp_launch}, joined to one {@code dmtcp_coordinator} ({@link DmtcpCoordinator}), each
 * with its checkpoint directory in {@code <rankDir>/dmtcp}. A generation is one blocking
 * checkpoint of them all ({@code dmtcp_command --bcheckpoint}), so the sockets between them are
 * drained and restored with them; each rank's capture then moves everything DMTCP wrote for it
 * into its image: the {@code ckpt_*.dmtcp} files, the {@code ckpt_*_files} directories beside
 * them (copies of the files the rank had open, {@code --ckpt-open-files}) and a copy of the
 * coordinator's restart script ({@link DmtcpFiles}). Restart: every rank's images through its own
 * {@code dmtcp_restart}, all joined to a fresh coordinator, which resumes them together once every
 * one is back. A job on several nodes is one computation across them ({@link DmtcpSpan}): rank 0's
 * agent runs its coordinator and asks each checkpoint; the other nodes collect their ranks' files
 * once it says the checkpoint ended. Without a span (one node, or no lead named) the node's ranks
 * are a computation of their own: ranks that come here from a lost node are restored into a
 * coordinator of their own computation (named by the restart script in their image) beside this
 * node's, and each generation then checkpoints both. DMTCP captures only processes started under
 * it: no one-off capture of an arbitrary pid. One instance per job on a node; its state is guarded
 * by {@code this}, and no lock is held while a DMTCP command runs.
 */
public final class DmtcpCapturer implements Capturer {
    /** The ranks under one coordinator: launched together, or restored from images of one computation. */
    private static final class Computation {
        final DmtcpCoordinator coordinator;
        /** The DMTCP directories of its ranks. */
        final Set<Path> areas = new LinkedHashSet<>();
        /** Its restored processes: a restore that one of them gives up on ends the wait for all. */
        final List<Process> members = new ArrayList<>();

        Computation(DmtcpCoordinator coordinator) {
            this.coordinator = coordinator;
        }
    }

    /**
     * This launch's computations by DMTCP computation id ("" for ranks launched fresh), empty
     * before the first launch and after {@link #stopped}.
     */
    private final Map<String, Computation> computations = new LinkedHashMap<>();
    /** The DMTCP directories whose files from the last checkpoint are still to be collected, with its stall. */
    private final Map<Path, Duration> pending = new HashMap<>();
    /**
     * The DMTCP directories whose checkpoint {@link #stopped} dropped before they were collected (the ranks
     * killed for a rollback while the generation's capture went rank by rank): their capture fails instead of
     * checkpointing whatever runs there by then, the restored ranks, whose files a restore has just put there.
     */
    private final Set<Path> dropped = new HashSet<>();
    /** The job's one computation across nodes, for the launch under way; null: this node's own. */
    private DmtcpSpan span;

    /**
     * Makes the next launch's ranks part of the job's one computation across nodes ({@code s}), or
     * of this node's own ({@code null}). Before the launch; the launch before it was stopped.
     */
    public synchronized void span(DmtcpSpan s) {
        this.span = s;
    }

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
        Path area = DmtcpFiles.prepareArea(rankDir);
        // --ckpt-open-files: the files the rank writes roll back with it (an appended log is cut back
        // to its length at the checkpoint instead of getting the lines after it twice); DMTCP puts
        // them back on restart only when allowed to overwrite them.
        List<String> out = new ArrayList<>(List.of("dmtcp_launch"));
        out.addAll(join(rankDir, area, "").coordinator.joinOptions());
        out.addAll(List.of("--ckptdir", area.toString(), "--no-gzip", "--ckpt-open-files", "--allow-file-overwrite"));
        out.addAll(command);
        return out;
    }

    /**
     * The computation {@code id} of this launch, its coordinator started now if there is none (or
     * it ended), with the rank's DMTCP directory added to it.
     */
    private synchronized Computation join(Path rankDir, Path area, String id) {
        if (span != null) {
            id = ""; // every rank of the job, whatever computation its image came from, joins the one of this start
        }
        Computation c = computations.get(id);
        if (c == null || !c.coordinator.alive()) {
            String name = ".dmtcp-coordinator" + (id.isEmpty() ? "" : "-" + id);
            Path dir = rankDir.toAbsolutePath().getParent().resolve(name);
            try {
                c = new Computation(span == null ? DmtcpCoordinator.start(dir) : span.coordinator(dir));
            } catch (IOException e) {
                throw new UncheckedIOException("cannot " + (span == null || span.leads() ? "start" : "find")
                        + " the job's DMTCP coordinator: " + e.getMessage(), e);
            }
            computations.put(id, c);
        }
        c.areas.add(area);
        return c;
    }

    private synchronized DmtcpSpan currentSpan() {
        return span;
    }

    /** Whether a newer start of the job came while this one's computation is still being put together. */
    private boolean superseded() {
        DmtcpSpan s = currentSpan();
        return s != null && s.superseded();
    }

    /** How many processes the computation of {@code c} has when all are in: the job's, or the node's. */
    private int peers(Computation c) {
        DmtcpSpan s = currentSpan();
        return s != null ? s.nranks() : c.areas.size();
    }

    @Override
    public Optional<Long> target(long launchedPid) {
        return Optional.of(launchedPid);
    }

    @Override
    public void started(boolean restored, Consumer<Set<Path>> lost) throws IOException {
        for (Computation c : computations()) {
            List<Process> started = List.copyOf(c.members);
            int peers = peers(c);
            if (restored) {
                // A dmtcp_restart that refuses its image (exit 99, "Unable to find checkpointed copy of file") is a
                // restore that failed, which rolls the job back to an older generation, not a crash of the rank,
                // which would roll it back to this image again.
                try {
                    c.coordinator.awaitRunning(peers, () -> started.stream().allMatch(Process::isAlive)
                            && !superseded());
                } catch (IOException e) {
                    String exit = started.stream().filter(p -> !p.isAlive()).findFirst()
                            .map(p -> " (exit " + p.exitValue() + ")").orElse("");
                    if (superseded()) { // every node restarts for the newer one: this start's ranks will not all come
                        throw new SupersededLaunchException("a newer start of the job came before this one's DMTCP"
                                + " computation ran", e);
                    }
                    if (c.areas.size() < peers && (exit.isEmpty() || !c.coordinator.reachable())) {
                        // Ranks of other nodes never came, or the lead ended the computation (its coordinator is gone,
                        // and the restarting processes here with it): nothing says these images are bad.
                        throw new IOException("the job's DMTCP computation did not run again: "
                                + (exit.isEmpty() ? "ranks of other nodes did not join it" : "its coordinator ended")
                                + "; " + e.getMessage(), e);
                    }
                    throw new RestartRefusedException("dmtcp_restart refused the images of " + peers + " rank(s)" + exit
                            + ": they did not run again (DMTCP said why on the agent's standard error, just before"
                            + " this); " + e.getMessage(), e);
                }
            }
            // Only this coordinator's ranks: it also ends, by itself, once its last rank exited (--exit-on-last),
            // while another computation's ranks on this node still run.
            Set<Path> rankDirs = new LinkedHashSet<>();
            c.areas.forEach(a -> rankDirs.add(a.getParent()));
            c.coordinator.onLost(() -> lost.accept(rankDirs));
        }
    }

    /** A copy of this launch's computations, their sets copied, taken under the lock. */
    private synchronized List<Computation> computations() {
        List<Computation> out = new ArrayList<>();
        for (Computation c : computations.values()) {
            Computation copy = new Computation(c.coordinator);
            copy.areas.addAll(c.areas);
            copy.members.addAll(c.members);
            out.add(copy);
        }
        return out;
    }

    @Override
    public void stopped() {
        List<Computation> all;
        synchronized (this) {
            all = List.copyOf(computations.values());
            computations.clear();
            dropped.addAll(pending.keySet());
            pending.clear();
            if (span != null && span.leads()) {
                span.board().forget(span.job());
            }
        }
        all.forEach(c -> c.coordinator.close());
    }

    /**
     * One blocking checkpoint of each computation of the node (one, unless ranks came here from a
     * lost node), one after another: a rank is stopped only for its own computation's. Returns
     * the longest stall.
     */
    @Override
    public Optional<Duration> checkpointTogether(Duration timeout) throws IOException {
        return checkpointTogether(-1, timeout);
    }

    /**
     * {@link #checkpointTogether(Duration)}; in a computation across nodes, the lead takes the one
     * checkpoint of every rank and posts how it ended for generation {@code generation}, and another
     * node waits for that (its ranks' files are then in their DMTCP directories).
     */
    @Override
    public Optional<Duration> checkpointTogether(long generation, Duration timeout) throws IOException {
        DmtcpSpan s = currentSpan();
        if (s == null) {
            return checkpointNode(timeout);
        }
        if (!s.leads()) {
            return Optional.of(awaitLead(s, generation, timeout));
        }
        try {
            Optional<Duration> stall = checkpointNode(timeout);
            s.board().checkpointed(s.job(), generation, "OK " + stall.orElse(Duration.ZERO).toMillis());
            return stall;
        } catch (IOException | RuntimeException e) {
            s.board().checkpointed(s.job(), generation, "ERR " + e.getMessage());
            throw e;
        }
    }

    /** Waits for the lead's word on generation {@code g}'s checkpoint; its files are then here to collect. */
    private Duration awaitLead(DmtcpSpan s, long g, Duration timeout) throws IOException {
        List<Computation> all = computations();
        if (all.isEmpty()) {
            throw new IOException("no rank of this job runs under the job's DMTCP coordinator here");
        }
        Duration stall = s.awaitCheckpoint(g, timeout);
        synchronized (this) {
            pending.clear();
            dropped.clear();
            all.forEach(c -> c.areas.forEach(a -> pending.put(a, stall)));
        }
        return stall;
    }

    /** One blocking checkpoint of each computation this node runs (see {@link #checkpointTogether(Duration)}). */
    private Optional<Duration> checkpointNode(Duration timeout) throws IOException {
        List<Computation> all = computations();
        if (all.isEmpty()) {
            throw new IOException("no rank of this job runs under a DMTCP coordinator of this agent");
        }
        synchronized (this) {
            pending.clear();
            dropped.clear();
        }
        Duration longest = Duration.ZERO;
        for (Computation c : all) {
            Duration stall;
            try {
                // Right after a launch or restart the coordinator listens before every process joined it, and a
                // checkpoint asked then would leave a rank out ("computation not in running state").
                c.coordinator.awaitRunning(peers(c), () -> c.members.stream().allMatch(Process::isAlive));
                // Only once the computation runs: right after a restore the rank's directory holds the
                // ckpt_*_files copies dmtcp_restart puts back from, which are no leftovers until it has.
                for (Path area : c.areas) {
                    DmtcpFiles.clearLeftovers(area);
                }
                // The stall: a blocking checkpoint returns once every process wrote its image and runs again;
                // moving the files into the images and fsyncing them happen while the ranks run.
                stall = c.coordinator.checkpoint(timeout);
            } catch (IOException e) {
                if (c.coordinator.wedged()) { // a rank died mid-checkpoint: the rest wait, stopped, for ever
                    c.coordinator.abandon();
                }
                throw e;
            }
            DmtcpFiles.copyScript(c.coordinator.dir(), c.areas);
            synchronized (this) {
                c.areas.forEach(a -> pending.put(a, stall));
            }
            longest = stall.compareTo(longest) > 0 ? stall : longest;
        }
        return Optional.of(longest);
    }

    @Override
    public Captured capture(long pid, Path rankDir, Path dir, Progress progress) throws IOException {
        if (rankDir == null) {
            throw new IllegalArgumentException("dmtcp captures only ranks started under dmtcp_launch: use "
                    + "`ferry run --capture dmtcp`");
        }
        Path area = DmtcpFiles.area(rankDir);
        boolean taken;
        boolean lost;
        synchronized (this) {
            taken = pending.containsKey(area);
            lost = !taken && dropped.remove(area);
        }
        if (lost) {
            throw new IOException("the ranks were stopped (a rollback) before process " + pid + "'s image of this"
                    + " checkpoint was collected; the ranks running now are not checkpointed in its place");
        }
        if (!taken) { // a caller that captures ranks one by one: the checkpoint takes every rank of the node
            checkpointTogether(CriuCapturer.TIMEOUT);
        }
        long[] bytes = new long[1];
        ImageDirs.fill(dir, partial -> {
            // Under the lock, so a stop cannot come between the check and the move: once stopped, the directory
            // may hold what a restore put there for dmtcp_restart.
            synchronized (this) {
                if (!pending.containsKey(area)) {
                    throw new IOException("the ranks were stopped (a rollback) while process " + pid
                            + "'s image was being collected");
                }
                if (DmtcpFiles.moveImage(area, partial) == 0) {
                    throw new IOException("dmtcp wrote no ckpt_*.dmtcp file into " + area + " (process " + pid
                            + ")");
                }
            }
            bytes[0] = ImageDirs.size(partial);
        });
        Duration took;
        synchronized (this) {
            took = Objects.requireNonNullElse(pending.remove(area), Duration.ZERO);
        }
        return new Captured(took, bytes[0], String.format(Locale.ROOT,
                "dmtcp checkpoint of process %d: %.1f MiB, stopped %.3f s", pid, bytes[0] / 1048576.0,
                took.toNanos() / 1e9));
    }

    /** The pid of this launch's first coordinator, or -1 (for tests that make it crash). */
    synchronized long coordinatorPid() {
        return computations.values().stream().findFirst().map(c -> c.coordinator.pid()).orElse(-1L);
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
     * as after {@code dmtcp_launch}. The image's {@code ckpt_*_files} directories are copied to
     * where DMTCP wrote them, the rank's DMTCP directory, which is the same path when the rank
     * restarts under the same Ferry home, on this node or another. Returns at once: the restored
     * processes resume only once every rank of the node joined; {@link #started} waits for that.
     */
    @Override
    public Process restore(Path imageDir, Path rankDir, ProcessBuilder rank) throws IOException {
        Path area = DmtcpFiles.prepareArea(rankDir);
        Computation computation = join(rankDir, area, DmtcpFiles.computation(imageDir));
        List<String> cmd = new ArrayList<>(List.of("dmtcp_restart"));
        cmd.addAll(computation.coordinator.joinOptions());
        cmd.addAll(List.of("--ckptdir", area.toString()));
        List<String> images = DmtcpFiles.unpackImage(imageDir, area);
        cmd.addAll(images);
        if (images.isEmpty()) {
            throw new RestartRefusedException("no ckpt_*.dmtcp file in " + imageDir + ": not a dmtcp image", null);
        }
        // In the rank's DMTCP directory: DMTCP restores the rank's own working directory.
        Process p = rank.command(cmd).directory(area.toFile()).start();
        synchronized (this) {
            computation.members.add(p);
        }
        return p;
    }

    @Override
    public boolean restores() {
        return true;
    }
}
