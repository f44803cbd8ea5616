package io.ferry.agent.capture;

import io.ferry.staging.Progress;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;

/**
 * A way to capture a running rank into an image directory without the rank's help
 * ({@code proc}, {@code criu}, {@code dmtcp}); the cooperative protocol is the agent's own.
 * An instance serves the ranks of one job on one node ({@link Capturers#of} gives a new one);
 * one capture at a time.
 */
public interface Capturer {
    /** The {@code --capture} name: proc, criu, dmtcp. */
    String method();

    /** Why this method cannot work on this machine (tool missing, kernel refused), or empty. */
    Optional<String> unavailable();

    /**
     * How to launch a rank so it can be captured later: wraps {@code command}. {@code rankDir}
     * is the rank's private work area, where a method may keep its own files.
     */
    List<String> launchCommand(List<String> command, Path rankDir);

    /**
     * The process to capture for a rank whose launched process is {@code launchedPid} (it
     * may be a wrapper); empty while it has not started yet.
     */
    Optional<Long> target(long launchedPid);

    /**
     * Captures {@code pid} into {@code dir}, which must not exist; the directory appears
     * only complete (fsynced), and on failure nothing is left. {@code rankDir} is the area
     * given to {@link #launchCommand}, or null for a process Ferry did not launch. Not
     * idempotent: a retry captures the process again, as it is then.
     */
    Captured capture(long pid, Path rankDir, Path dir, Progress progress) throws IOException;

    /**
     * A command a person could run to restart a process from an image this method wrote (what
     * {@code ferry capture} prints), or empty when Ferry cannot restore it. The agent restarts
     * its ranks with {@link #restore} instead, which also puts back what the image carries
     * beside the process.
     */
    Optional<List<String>> restartCommand(Path imageDir);

    /**
     * Restarts a rank from {@code imageDir} (a verified copy of an image this method wrote):
     * puts back what the image carries beside the process, then starts the restorer with
     * {@code rank}'s environment and redirects, its command replaced. Returns the rank's process,
     * alive until the restored rank ends, with its exit code. {@code rankDir} is the rank's fresh
     * work area, as for {@link #launchCommand}. Not idempotent: each call restores anew.
     *
     * @throws IOException when the restorer refuses the image (the generation is then not used)
     */
    default Process restore(Path imageDir, Path rankDir, ProcessBuilder rank) throws IOException {
        throw new IOException(method() + " images cannot be restored by Ferry");
    }

    /**
     * Whether ranks under this method need standard streams Ferry owns (pipes the agent copies
     * to its own output) rather than the agent's: a restorer that reopens the rank's streams by
     * path refuses a log file that grew since the dump, and a pipe can be handed back instead.
     */
    default boolean ownsStreams() {
        return false;
    }

    /**
     * Every rank of one launch has been started (each with {@link #launchCommand}, or, when
     * {@code restored}, {@link #restore}). A method that restores a node's ranks together
     * (DMTCP: they resume only once all joined one coordinator) waits here until they run, and
     * throws {@link RestartRefusedException} when they do not. {@code lost} is given the rank
     * directories (as given to {@link #launchCommand} or {@link #restore}) of ranks something
     * they depend on ended under (DMTCP: their coordinator died): the agent kills those still
     * running then, a crash it recovers from like any other.
     */
    default void started(boolean restored, Consumer<Set<Path>> lost) throws IOException {
    }

    /** Every rank of the launch was stopped: a method that keeps a process of its own for the ranks ends it. */
    default void stopped() {
    }

    /**
     * Before a node's ranks are captured one by one for one generation: a method that takes
     * them all in one checkpoint (DMTCP) takes it here and returns how long they were stopped;
     * {@link #capture} then only collects each rank's part. Empty for a method that captures
     * each rank by itself.
     */
    default Optional<Duration> checkpointTogether(Duration timeout) throws IOException {
        return Optional.empty();
    }

    /** {@link #checkpointTogether(java.time.Duration)} for generation {@code generation}. */
    default Optional<Duration> checkpointTogether(long generation, Duration timeout)
            throws IOException {
        return checkpointTogether(timeout);
    }

    /** Whether {@link #restartCommand} can restore this method's images at all. */
    boolean restores();

    /** One capture: how long the process was stopped, how big the image is, and a line about it. */
    record Captured(Duration stall, long imageBytes, String summary) {}
}
