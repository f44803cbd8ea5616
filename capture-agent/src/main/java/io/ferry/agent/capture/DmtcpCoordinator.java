package io.ferry.agent.capture;

import io.ferry.model.OwnerOnly;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One {@code dmtcp_coordinator} process for the ranks of one job on this node, started by the
 * agent (its child, not a daemon), so that one blocking checkpoint takes every rank at once and
 * the sockets between them are drained and restored together. It listens on a port the kernel
 * picks (written to {@code <dir>/port}), keeps DMTCP's restart scripts in {@code dir}, writes
 * its own lines to {@code <dir>/coordinator.log}, and exits by itself when its last process
 * leaves ({@code --exit-on-last}), so none outlives a job whose agent was killed. DMTCP's
 * coordinator has no login: any local user who finds the port can ask it for a checkpoint or a
 * kill (a limit the operators' guide names). Thread-safe.
 */
final class DmtcpCoordinator implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DmtcpCoordinator.class);
    /** How long a just-started coordinator may take to write its port, and its processes to join it. */
    static final Duration PATIENCE = Duration.ofSeconds(30);

    /** The coordinator's process, or null for one another node's agent runs ({@link #remote}). */
    private final Process process;
    /** Where its processes reach it: 127.0.0.1 for this node's ranks only, the lead's address for a job's. */
    private final String host;
    private final String port;
    private final Path dir;
    private volatile boolean closing;

    private DmtcpCoordinator(Process process, String host, String port, Path dir) {
        this.process = process;
        this.host = host;
        this.port = port;
        this.dir = dir;
    }

    /** Starts a fresh coordinator of this node's ranks only (on loopback), its files in {@code dir}. */
    static DmtcpCoordinator start(Path dir) throws IOException {
        return start(dir, "127.0.0.1");
    }

    /**
     * The coordinator of a job's ranks on several nodes, run by another node's agent (the lead of
     * a {@link DmtcpSpan}) at {@code host}:{@code port}: this node's ranks join it and its status
     * is asked of it; it is neither started nor stopped here.
     */
    static DmtcpCoordinator remote(String host, String port) {
        return new DmtcpCoordinator(null, host, port, null);
    }

    /**
     * Starts a fresh coordinator keeping its files in {@code dir} (created, emptied of an earlier
     * one's port), reached at {@code host} (it listens on every address: DMTCP has no option to bind one).
     */
    static DmtcpCoordinator start(Path dir, String host) throws IOException {
        OwnerOnly.createDirectories(dir);
        Path portFile = dir.resolve("port");
        Files.deleteIfExists(portFile);
        Process p = new ProcessBuilder(List.of("dmtcp_coordinator", "--coord-port", "0", "--port-file",
                portFile.toString(), "--ckptdir", dir.toString(), "--exit-on-last"))
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("coordinator.log").toFile()))
                .start();
        long until = System.nanoTime() + PATIENCE.toNanos();
        while (true) {
            String port = Files.exists(portFile) ? Files.readString(portFile).trim() : "";
            if (!port.isEmpty()) {
                return new DmtcpCoordinator(p, host, port, dir);
            }
            if (!p.isAlive() || System.nanoTime() > until) {
                String why = p.isAlive() ? "wrote no port within " + PATIENCE.toSeconds() + " s" : "ended at its start";
                p.destroyForcibly();
                throw new IOException("dmtcp_coordinator " + why + ": see " + dir.resolve("coordinator.log"));
            }
            pause(20);
        }
    }

    String port() {
        return port;
    }

    /** Where the coordinator keeps its port, its log and DMTCP's restart scripts. */
    Path dir() {
        return dir;
    }

    long pid() {
        return process == null ? -1 : process.pid();
    }

    /** Whether it still runs (one on another node: as far as this agent can tell, yes). */
    boolean alive() {
        return process == null || process.isAlive();
    }

    /** Whether another node's agent runs it. */
    boolean remote() {
        return process == null;
    }

    /** The options that make {@code dmtcp_launch} or {@code dmtcp_restart} join this coordinator. */
    List<String> joinOptions() {
        return List.of("--join-coordinator", "--coord-host", host, "--coord-port", port);
    }

    /**
     * Runs {@code whenLost} if the coordinator ends other than by {@link #close()}. Not for one on
     * another node: its end ends its processes here too, which their exits report.
     */
    void onLost(Runnable whenLost) {
        if (process == null) {
            return;
        }
        process.onExit().thenRun(() -> {
            if (!closing) {
                if (process.exitValue() == 0) { // --exit-on-last: its last process left, the ranks' normal end
                    LOG.info("the DMTCP coordinator on port {} (pid {}) ended after its last process", port,
                            process.pid());
                } else {
                    LOG.warn("the DMTCP coordinator on port {} (pid {}) ended under its ranks (exit {})", port,
                            process.pid(), process.exitValue());
                }
                whenLost.run(); // whatever still runs of its ranks is unprotected now
            }
        });
    }

    /**
     * Waits until the coordinator says its computation runs with at least {@code peers}
     * processes: after a launch, until every rank joined; after a restart, until every restored
     * process is back (DMTCP resumes them all together, or none).
     *
     * @param alive whether the ranks still run: waiting stops, failing, once they do not
     */
    void awaitRunning(int peers, BooleanSupplier alive) throws IOException {
        long until = System.nanoTime() + PATIENCE.toNanos();
        while (true) {
            ExternalTool.Result r = ExternalTool.run(command("--status"), PATIENCE);
            if (r.exit() == 0 && r.output().contains("RUNNING=yes") && peers(r.output()) >= Math.max(1, peers)) {
                return;
            }
            if (System.nanoTime() > until || !alive.getAsBoolean() || !alive()) {
                String when = !alive() ? "(it exited)"
                        : alive.getAsBoolean() ? "within " + PATIENCE.toSeconds() + " s" : "before the ranks ended";
                throw new IOException("the DMTCP coordinator on port " + port + " says no running computation of "
                        + peers + " process(es) " + when + ": " + r.lastLines(3));
            }
            pause(50);
        }
    }

    /** Whether the coordinator answers a status request (false once it ended, or cannot be reached). */
    boolean reachable() {
        try {
            return ExternalTool.run(command("--status"), PATIENCE).exit() == 0;
        } catch (IOException unreachable) {
            return false;
        }
    }

    /** {@code dmtcp_command} of this coordinator. */
    private List<String> command(String what) {
        return List.of("dmtcp_command", "--coord-host", host, "--coord-port", port, what);
    }

    private static int peers(String status) {
        Matcher m = Pattern.compile("NUM_PEERS=(\\d+)").matcher(status);
        return m.find() ? Integer.parseInt(m.group(1)) : 0;
    }

    /**
     * Whether the computation is wedged: processes joined, none running, as DMTCP leaves them when
     * one of them dies in the middle of a checkpoint (the others wait at its barrier for ever,
     * stopped). Nothing but a restart brings such a computation back.
     */
    boolean wedged() {
        try {
            ExternalTool.Result r = ExternalTool.run(command("--status"), PATIENCE);
            return r.exit() == 0 && peers(r.output()) > 0 && r.output().contains("RUNNING=no");
        } catch (IOException unreachable) {
            return false;
        }
    }

    /**
     * Ends the coordinator as a loss (SIGKILL, and whoever {@link #onLost} named is told): for a
     * wedged computation, whose stopped processes the agent then kills, so the job recovers.
     */
    void abandon() {
        if (process == null) {
            return; // the lead's agent gives it up
        }
        LOG.warn("the DMTCP computation of the coordinator on port {} is wedged (a process died during a checkpoint):"
                + " it is given up as lost", port);
        process.destroyForcibly();
    }

    /** One blocking checkpoint of every process: returns how long they were stopped. */
    Duration checkpoint(Duration timeout) throws IOException {
        long t0 = System.nanoTime();
        ExternalTool.Result r = ExternalTool.run(command("--bcheckpoint"), timeout);
        Duration stall = Duration.ofNanos(System.nanoTime() - t0);
        if (r.exit() != 0) {
            throw new IOException("dmtcp_command --bcheckpoint failed (exit " + r.exit() + "): " + r.lastLines(3));
        }
        return stall;
    }

    /** Stops the coordinator (SIGKILL: its processes were stopped before, or are to be stopped now). */
    @Override
    public void close() {
        closing = true;
        if (process == null) {
            return;
        }
        process.destroyForcibly();
        try {
            process.onExit().get(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            LOG.warn("the DMTCP coordinator (pid {}) did not end within 10 s of SIGKILL", process.pid());
        }
    }

    static void pause(long millis) throws InterruptedIOException {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted waiting for a DMTCP coordinator");
        }
    }
}
