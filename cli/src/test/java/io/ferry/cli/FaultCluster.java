package io.ferry.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * One of the fault harness's clusters ({@link FaultHarness}): a broker (null: the coordinator's own), a
 * coordinator, two agents, and the Kafka address they share; each a process of its own, started once and
 * started again with the same arguments when the harness killed it.
 */
record FaultCluster(FaultCluster.Daemon broker, FaultCluster.Daemon coordinator, List<FaultCluster.Daemon> agents,
                    String kafka) {

    /** A coordinator with its embedded broker listening on {@code kafka}, and agents n0 and n1; homes under dir. */
    static FaultCluster embedded(Path dir, String kafka) {
        return new FaultCluster(null, coordinator(dir, "coordinator", "--listen", kafka),
                List.of(agent(dir, "n0", kafka), agent(dir, "n1", kafka)), kafka);
    }

    /** A site's separate broker on {@code kafka} (alone in its JVM), a coordinator of it, and agents m0 and m1. */
    static FaultCluster separate(Path dir, String kafka) {
        Daemon broker = new Daemon(dir, "broker", "broker serving", dir.resolve("site-kafka").toString(), kafka);
        broker.main = BrokerProcess.class;
        return new FaultCluster(broker, coordinator(dir, "coordinator-site", "--kafka", kafka),
                List.of(agent(dir, "m0", kafka), agent(dir, "m1", kafka)), kafka);
    }

    /** A coordinator with its embedded broker ({@code --listen}) or of a separate one ({@code --kafka}). */
    private static Daemon coordinator(Path dir, String name, String kafkaFlag, String kafka) {
        return new Daemon(dir, name, "ferry coordinator: serving jobs", "coordinator", "--home",
                dir.resolve(name).toString(),
                kafkaFlag, kafka, "--http", "off", "--heartbeat-timeout", "10s", "--takeover-after", "6s");
    }

    private static Daemon agent(Path dir, String node, String kafka) {
        return new Daemon(dir, node, "ferry agent " + node, "agent", "--kafka", kafka, "--node", node, "--home",
                dir.resolve(node).toString(), "--heartbeat", "1s", "--peer-listen", "off");
    }

    void startOnce() throws IOException, InterruptedException {
        if (coordinator.process != null) {
            return;
        }
        if (broker != null) {
            broker.start();
        }
        coordinator.start();
        for (Daemon a : agents) {
            a.start();
        }
    }

    void stop() throws InterruptedException {
        for (Daemon d : agents) {
            if (d.process != null) {
                d.kill();
            }
        }
        if (coordinator.process != null) {
            coordinator.kill();
        }
        if (broker != null && broker.process != null) {
            broker.kill();
        }
    }

    String nodes() {
        return String.join(",", agents.stream().map(a -> a.name).toList());
    }

    /** One of the cluster's long-lived processes, started again with the same arguments when it dies. */
    static final class Daemon {
        final String name;
        final List<String> args;
        /** Where its crash file lies. */
        private final Path dir;
        /** The class whose main it runs: Ferry's command line, or {@link BrokerProcess}. */
        Class<?> main = Main.class;
        /** The line it prints once it serves. */
        final String ready;
        Process process;
        Lines lines;

        Daemon(Path dir, String name, String ready, String... args) {
            this.dir = dir;
            this.name = name;
            this.ready = ready;
            this.args = List.of(args);
        }

        /** Where the harness arms a crash point while it runs ({@link io.ferry.model.CrashPoint}). */
        Path crashFile() {
            return dir.resolve("crash-" + name);
        }

        /** Starts it, not armed, and waits until it serves. */
        void start() throws IOException, InterruptedException {
            Files.deleteIfExists(crashFile());
            List<String> jvm = List.of("-Xmx384m", "-Dferry.crash-file=" + crashFile());
            ProcessBuilder pb = FerryProcess.builder(jvm, args.toArray(String[]::new));
            if (main != Main.class) {
                pb.command().set(pb.command().indexOf(Main.class.getName()), main.getName());
            }
            process = pb.redirectErrorStream(true).start();
            lines = new Lines(process, name);
            lines.await(name + " serving", l -> l.startsWith(ready));
        }

        void kill() throws InterruptedException {
            process.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            process.waitFor();
        }
    }
}
