package io.ferry.cli;

import io.ferry.eventlog.KafkaLog;
import io.ferry.model.DaemonThreads;
import io.ferry.model.Event;
import io.ferry.model.LaunchSpec;

import java.io.Closeable;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The site's launcher of a job submitted with {@code ferry run --launch 'mpirun -n 64 ...'}:
 * each {@link Event.LauncherRequested} of the coordinator stops the running launcher (SIGTERM,
 * then SIGKILL to what is left of it after 10 s) and runs
 * {@code sh -c 'exec LAUNCHER "$@"' ferry-rank --job J --generation G -- PROGRAM ARGS}, so the
 * launcher text keeps its shell quoting and the program its exact arguments. A launcher that
 * ends by itself is reported as {@link Event.LauncherExited}; one stopped here is not. While it
 * is open it sends a {@link Event.Heartbeat#LAUNCHER} heartbeat every second.
 * Thread-safe: requests run one after another on their own thread.
 */
final class SiteLauncher implements Closeable {
    /** How long a launcher being stopped gets after SIGTERM (mpirun takes ~1 s to stop its ranks). */
    private static final long STOP_PATIENCE_SECONDS = 10;

    private final KafkaLog log;
    private final String job;
    private final String launcher;
    private final List<String> program;
    /** The store credentials the job's ranks inherit (rank.pass-env). */
    private final List<String> passEnv;
    private final Path shim;
    private final PrintStream out;
    private final ExecutorService lane = Executors.newSingleThreadExecutor(DaemonThreads.named("ferry-launcher"));
    private final ScheduledExecutorService alive = Executors.newSingleThreadScheduledExecutor(
            DaemonThreads.named("ferry-launcher-heartbeat"));
    private Process running;
    private int runningAttempt;

    SiteLauncher(KafkaLog log, String job, String launcher, List<String> program, List<String> passEnv, PrintStream out)
            throws IOException {
        this.log = log;
        this.passEnv = List.copyOf(passEnv);
        this.job = job;
        this.launcher = launcher;
        this.program = List.copyOf(program);
        this.out = out;
        this.shim = shim();
        // While this process holds the launcher it says so: if it dies (killed, its allocation ended),
        // the coordinator ends the job instead of waiting for a launcher nobody will run again.
        alive.scheduleAtFixedRate(this::heartbeat, 0, Event.Heartbeat.LAUNCHER_INTERVAL_MILLIS, TimeUnit.MILLISECONDS);
    }

    private void heartbeat() {
        try {
            log.append(new Event.Heartbeat(job, Event.Heartbeat.LAUNCHER));
        } catch (RuntimeException e) {
            // the broker is away: the next beat tries again (the coordinator, if it can read, sees the gap)
        }
    }

    /**
     * {@code bin/ferry-rank} of this installation: beside the jar's module (cli/target/..) or named by -Dferry.rank.
     */
    static Path shim() throws IOException {
        String named = System.getProperty("ferry.rank");
        Path p;
        if (named != null) {
            p = Path.of(named);
        } else {
            try {
                Path code = Path.of(SiteLauncher.class.getProtectionDomain().getCodeSource().getLocation().toURI());
                p = code.getParent().getParent().getParent().resolve("bin").resolve("ferry-rank");
            } catch (URISyntaxException | RuntimeException e) {
                throw new IOException("cannot tell where Ferry is installed: set -Dferry.rank=PATH/bin/ferry-rank", e);
            }
        }
        if (!Files.isExecutable(p)) {
            throw new IOException(p
                    + " is missing or not executable: --launch needs bin/ferry-rank of this installation,"
                    + " on a path every node sees (or -Dferry.rank=PATH)");
        }
        return p.toAbsolutePath();
    }

    /** The command line of one attempt whose ranks restart from {@code generation}. */
    List<String> command(long generation) {
        List<String> cmd = new ArrayList<>(List.of("/bin/sh", "-c", "exec " + launcher + " \"$@\"", "ferry-launch",
                shim.toString(), "--job", job, "--generation", Long.toString(generation), "--"));
        cmd.addAll(program);
        return cmd;
    }

    /** The coordinator asks for (another) run of the launcher: done on the launcher's own thread. */
    void request(Event.LauncherRequested r) {
        lane.execute(() -> {
            try {
                stopRunning();
                start(r);
            } catch (IOException | RuntimeException e) {
                out.println("ferry: job " + job + ": cannot run the launcher: " + e.getMessage());
                log.append(new Event.LauncherExited(job, r.attempt(), 127));
            }
        });
    }

    private void start(Event.LauncherRequested r) throws IOException {
        List<String> cmd = command(r.generation());
        out.println("ferry: job " + job + ": launcher attempt " + r.attempt() + (r.generation() >= 0
                ? ", ranks restart from generation " + r.generation() : ", ranks start from the beginning") + ": "
                + launcher);
        ProcessBuilder pb = new ProcessBuilder(cmd).inheritIO();
        // srun hands its whole environment to the ranks: Ferry's credentials, and the store's unless the job
        // passes them (rank.pass-env), stay with Ferry
        LaunchSpec.removeSecrets(pb.environment(), passEnv);
        Process p = pb.start();
        synchronized (this) {
            running = p;
            runningAttempt = r.attempt();
        }
        p.onExit().thenAccept(done -> {
            synchronized (this) {
                if (running != done) {
                    return; // stopped here for the next attempt: not the launcher's own end
                }
                running = null;
            }
            out.println("ferry: job " + job + ": launcher attempt " + r.attempt() + " exited with " + done.exitValue());
            log.append(new Event.LauncherExited(job, r.attempt(), done.exitValue()));
        });
    }

    /** SIGTERM to the launcher (mpirun stops its ranks), then SIGKILL to whatever of it is left. */
    private void stopRunning() {
        Process p;
        synchronized (this) {
            p = running;
            running = null;
        }
        if (p == null || !p.isAlive()) {
            return;
        }
        List<ProcessHandle> tree = new ArrayList<>(p.descendants().toList());
        p.destroy();
        try {
            if (!p.waitFor(STOP_PATIENCE_SECONDS, TimeUnit.SECONDS)) {
                out.println("ferry: job " + job + ": launcher attempt " + runningAttempt + " ignored SIGTERM for "
                        + STOP_PATIENCE_SECONDS + " s; killing it");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        tree.addAll(p.descendants().toList());
        tree.forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
    }

    @Override
    public void close() {
        alive.shutdownNow();
        lane.shutdownNow();
        stopRunning();
    }
}
