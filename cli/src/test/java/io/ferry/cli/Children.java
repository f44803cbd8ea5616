package io.ferry.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The child processes a cluster test starts (coordinators, agents, runs), each with its output
 * kept ({@link Lines}), killed with their descendants when the test ends ({@link #stopAll()}).
 */
final class Children {
    private final List<Process> started = new ArrayList<>();
    private Process last;

    /** Starts {@code pb}, its stderr merged into its stdout; the lines it prints, named p1, p2, ... */
    Lines start(ProcessBuilder pb) throws IOException {
        Process p = pb.redirectErrorStream(true).start();
        started.add(p);
        last = p;
        return new Lines(p, "p" + started.size());
    }

    /** The process the last {@link #start} started. */
    Process last() {
        return last;
    }

    /** A `ferry coordinator` over {@code home} with its embedded broker on {@code kafka}, once it serves. */
    Lines coordinator(Path home, String kafka, String... more) throws IOException, InterruptedException {
        List<String> args = new ArrayList<>(List.of("coordinator", "--home", home.toString(), "--listen", kafka,
                "--http", "off"));
        args.addAll(List.of(more));
        Lines c = start(FerryProcess.builder(List.of("-Xmx384m"), args.toArray(String[]::new)));
        c.await("the coordinator serves", l -> l.startsWith("ferry coordinator: serving jobs"));
        return c;
    }

    /**
     * A `ferry agent` named {@code node} (home {@code home}, heartbeats every second, no peer port), once it serves.
     */
    Lines agent(String kafka, String node, Path home, String... more) throws IOException, InterruptedException {
        List<String> args = new ArrayList<>(List.of("agent", "--kafka", kafka, "--node", node, "--home",
                home.toString(),
                "--heartbeat", "1s", "--peer-listen", "off"));
        args.addAll(List.of(more));
        Lines a = start(FerryProcess.builder(List.of("-Xmx256m"), args.toArray(String[]::new)));
        a.await("agent " + node, l -> l.startsWith("ferry agent " + node));
        return a;
    }

    /** Kills every process started, and their descendants (a run's ranks); a frozen one is thawed first. */
    void stopAll() {
        for (Process p : started) {
            try {
                new ProcessBuilder("kill", "-CONT", Long.toString(p.pid())).start().waitFor();
            } catch (IOException e) {
                // no kill(1): nothing was frozen with it either
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            p.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
    }
}
