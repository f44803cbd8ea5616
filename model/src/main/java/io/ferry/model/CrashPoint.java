package io.ferry.model;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Named points in the checkpoint path where the fault harness ({@code FaultHarness}) makes a
 * process die, to prove that a crash there loses nothing. Armed only by JVM properties, never by
 * configuration a user sets by accident: {@code -Dferry.crash-at=NAME[@N]} at start, or
 * {@code -Dferry.crash-file=PATH}, a file holding {@code NAME[@N]} that the harness writes while
 * the process runs (read at each reach; deleted when it fires, so the process started again
 * after the crash is not armed). The N-th time (default 1st) the process reaches NAME it kills
 * its child processes, as a service manager does with the rest of a service's cgroup when its
 * main process dies, and halts at once with exit status 137: no shutdown hook, no finally
 * block, no flush, as SIGKILL. Unarmed, {@link #reach} is one field read.
 *
 * <p>{@code coordinator.start-placed}: a job's start (its placement) logged, no launch command sent yet. The points, in
 * the order a checkpoint passes them: {@code agent.captured} (images in the
 * node cache, nothing reported), {@code agent.pack-written} (a pack durable on the store, the
 * manifest not yet), {@code agent.manifest-written} (the manifest durable, {@code ImageStaged}
 * not yet sent), {@code coordinator.before-marker} (every rank staged, no commit marker),
 * {@code coordinator.marker-written} (the marker durable, {@code SnapshotEstablished} not yet
 * in the log).
 */
public final class CrashPoint {
    private static final String AT_START = System.getProperty("ferry.crash-at", "");
    private static final Path FILE = System.getProperty("ferry.crash-file", "").isEmpty() ? null
            : Path.of(System.getProperty("ferry.crash-file"));
    private static final AtomicInteger REACHED = new AtomicInteger();
    private static String counting = "";

    private CrashPoint() {}

    /** Halts the process if {@code name} is the armed point and this is the armed reach of it. */
    public static void reach(String name) {
        if (AT_START.isEmpty() && FILE == null) {
            return;
        }
        String armed = AT_START.isEmpty() ? fromFile() : AT_START;
        String point = armed.contains("@") ? armed.substring(0, armed.indexOf('@')) : armed;
        if (point.isEmpty() || !point.equals(name)) {
            return;
        }
        int at;
        try {
            at = armed.contains("@") ? Integer.parseInt(armed.substring(armed.indexOf('@') + 1)) : 1;
        } catch (NumberFormatException notArmed) {
            return;
        }
        synchronized (CrashPoint.class) {
            if (!armed.equals(counting)) { // newly armed (the file changed): count from here
                counting = armed;
                REACHED.set(0);
            }
        }
        if (REACHED.incrementAndGet() != at) {
            return;
        }
        System.err.println("ferry: crash point " + name + "@" + at + " reached (" + (FILE != null && AT_START.isEmpty()
                ? FILE : "-Dferry.crash-at") + "): halting");
        System.err.flush();
        if (FILE != null) {
            try {
                Files.deleteIfExists(FILE);
            } catch (IOException e) {
                // the harness disarms it before starting the process again
            }
        }
        ProcessHandle.current().descendants().forEach(ProcessHandle::destroyForcibly);
        Runtime.getRuntime().halt(137);
    }

    private static String fromFile() {
        try {
            return Files.readString(FILE, StandardCharsets.US_ASCII).trim();
        } catch (NoSuchFileException none) {
            return "";
        } catch (IOException | RuntimeException unreadable) {
            return "";
        }
    }
}
