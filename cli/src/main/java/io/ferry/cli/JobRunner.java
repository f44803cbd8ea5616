package io.ferry.cli;

import io.ferry.agent.AgentService;
import io.ferry.agent.MetricsEndpoint;
import io.ferry.agent.NodeAgent;
import io.ferry.agent.Quiesce;
import io.ferry.coordinator.Coordinator;
import io.ferry.coordinator.JobView;
import io.ferry.eventlog.KafkaLog;
import io.ferry.eventlog.LogSettings;
import io.ferry.model.Command;
import io.ferry.model.Event;
import io.ferry.model.LaunchSpec;
import io.ferry.model.Names;
import io.ferry.model.Placement;
import io.ferry.staging.OpenedStore;
import io.ferry.staging.StagingConfig;
import io.ferry.stores.Stores;

import java.io.Closeable;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * One job, submitted and watched to its end. With no {@code --kafka} it brings the whole
 * system up in this process first, the coordinator service and one agent for this host: a
 * one-node cluster, so the one-machine path is the cluster path. With a placement it only
 * submits to the coordinator and agents already serving the Kafka log. With a launcher the
 * site's launcher starts the ranks and they join the agents of the nodes they land on
 * ({@link SiteLauncher}). Used by {@code ferry run} and {@code ferry demo}.
 */
final class JobRunner implements Closeable {
    /**
     * @param placement where the ranks run, or null: every rank on this host, services in-process
     *                  (unless {@code launcher} places them)
     * @param launcher  the site's launcher ({@code mpirun -n 64 ...}, {@code srun ...}) that starts the
     *                  ranks, or null: Ferry's agents start them
     */
    record Spec(String job, int ranks, Duration interval, boolean autoRecover, String store, FerryHome home,
                KafkaAccess kafka, HttpOptions http, Placement placement, String launcher, Program program) {}

    /** What every rank runs, how it is captured, and the configuration ({@code --set}). */
    record Program(List<String> command, Quiesce quiesce, Map<String, String> settings) {}

    /** How long a submitted job waits for every node of it to answer before it gives up. */
    static final Duration LAUNCH_PATIENCE = Duration.ofSeconds(60);

    private final Spec spec;
    private final String node;
    private CoordinatorService services;
    private AgentService agents;
    private Closeable homeLock;
    /** The in-process agent's Prometheus endpoint ({@code agent.metrics}), or null. */
    private MetricsEndpoint agentMetrics;
    private KafkaLog ownLog;
    /** The log the job runs on, once started. */
    private volatile KafkaLog log;
    private JobWatch watch;
    private SiteLauncher launcher;

    JobRunner(Spec spec) {
        this.spec = spec;
        this.node = nodeName();
    }

    /** This host's node name: its host name, made safe. */
    static String nodeName() {
        try {
            return InetAddress.getLocalHost().getHostName().replaceAll("[^A-Za-z0-9._-]", "_");
        } catch (IOException e) {
            return "localhost";
        }
    }

    /** Asks the coordinator to halt the job before {@code deadline} ({@link io.ferry.model.Command.Halt}). */
    /**
     * Asks the coordinator to halt the job before {@code deadline}: the command is in the log when
     * this returns, sent again while the log does not take it (a coordinator with its embedded
     * broker restarting, a site's Kafka away) until the deadline, then the last failure is thrown.
     */
    void halt(Instant deadline, String why) {
        KafkaLog l = log;
        if (l == null) {
            return;
        }
        Command.Halt halt = new Command.Halt(spec.job(), deadline.toEpochMilli(), why);
        while (true) {
            try {
                l.send(KafkaLog.COORDINATOR, halt);
                return;
            } catch (IllegalStateException notTaken) {
                if (Instant.now().isAfter(deadline) || Thread.currentThread().isInterrupted()) {
                    throw notTaken;
                }
                System.out.println("ferry: the event log did not take the halt (" + notTaken.getMessage()
                        + "); sending it again");
            }
        }
    }

    void start(PrintStream out) throws IOException, InterruptedException {
        Names.requireJob(spec.job());
        KafkaLog log;
        Placement placement = spec.launcher() != null ? Placement.launcher(spec.ranks()) : spec.placement();
        Program program = spec.program();
        String store = Stores.parse(spec.store()).toString();
        // In-process services unless the job is submitted to agents already running: a placement
        // on named nodes, or a launcher with --kafka (its ranks join the agents of their nodes).
        if (spec.placement() == null && (spec.launcher() == null || !spec.kafka().external())) {
            // The one-node cluster: the store is opened here first, so bad settings fail before anything starts.
            Optional<InetSocketAddress> metricsAt = AgentMetrics.configured(System.getenv());
            try (OpenedStore check = StoreOptions.open(spec.store(), program.settings())) {
                store = check.store().uri().toString();
            }
            // its agent is this home's one: not beside a `ferry agent` over the cache
            homeLock = spec.home().lockAgent();
            // Credentials given with --set stay in this process: the log gets the settings without them.
            Map<String, String> secrets = new TreeMap<>(program.settings());
            secrets.keySet().removeIf(k -> !LaunchSpec.isSecret(k));
            services = CoordinatorService.start(spec.home(), spec.kafka(), "127.0.0.1:0", spec.http(),
                    Coordinator.DEFAULT_HEARTBEAT_TIMEOUT, secrets, spec.job(), out);
            log = services.log();
            // The home's cache is this node's: the jobs that ran from it before are reclaimed as `ferry agent` does.
            agents = new AgentService(log, node, spec.home().dir(), NodeAgent.HEARTBEAT_INTERVAL, secrets,
                    spec.launcher() != null).reclaiming(AgentCommand.cacheRetention());
            agentMetrics = AgentMetrics.start(agents, metricsAt, out);
            agents.start();
            if (placement == null) {
                placement = Placement.single(spec.ranks(), node);
            }
        } else {
            ownLog = new KafkaLog(spec.kafka().bootstrap(), spec.kafka().client(), LogSettings.EXTERNAL);
            log = ownLog;
        }
        if (spec.launcher() != null) {
            launcher = new SiteLauncher(log, spec.job(), spec.launcher(), program.command(),
                    StagingConfig.PASS_ENV.parse(program.settings()
                            .getOrDefault(StagingConfig.PASS_ENV.name(), "")), out);
        }
        EventPrinter printer = new EventPrinter(out, System.nanoTime(), () -> watch.view());
        this.log = log;
        watch = new JobWatch(log, spec.job(), e -> {
            printer.accept(e);
            if (launcher != null && e instanceof Event.LauncherRequested r) {
                launcher.request(r);
            }
        });
        Quiesce q = program.quiesce();
        log.append(new Event.JobStarted(spec.job(), spec.ranks(), spec.interval().toMillis(), spec.autoRecover(), store,
                node, placement.toString(),
                new LaunchSpec(program.command(), q.method(), q.timeout().toMillis(), q.signal(),
                LaunchSpec.withoutSecrets(program.settings()))));
        out.printf(Locale.ROOT, "ferry: job %s: %d ranks on %s, checkpoint every %.1f s, store %s, log %s%n",
                spec.job(), spec.ranks(), placement.byLauncher() ? "the nodes its launcher picks"
                        : placement.nodes().size() == 1 ? placement.nodes().get(0)
                        : placement.nodes().size() + " nodes (" + placement + ")",
                spec.interval().toMillis() / 1000.0, store, log.bootstrapServers());
        watch.awaitOwnStart(LAUNCH_PATIENCE); // refused at once where the job is another login's
        if (placement.byLauncher()) {
            awaitCoordinator(watch.attemptsAtStart(LAUNCH_PATIENCE));
        } else {
            awaitNodes(placement);
        }
    }

    /** A launcher's job waits for the coordinator's first launch request: no coordinator, no job. */
    private void awaitCoordinator(int attemptsBefore) throws InterruptedException {
        long deadline = System.nanoTime() + LAUNCH_PATIENCE.toNanos();
        while (watch.read(j -> j.launchAttempt() <= attemptsBefore && !j.finished()).orElse(true)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("no coordinator took job " + spec.job() + " within "
                        + LAUNCH_PATIENCE.toSeconds() + " s: is `ferry coordinator` running on "
                        + spec.kafka().bootstrap() + "?");
            }
            Thread.sleep(100);
        }
    }

    /**
     * Waits until every node of the job has answered (a heartbeat of the job), or one said it
     * cannot launch it: a job nobody runs must not wait for ever.
     */
    private void awaitNodes(Placement placement) throws InterruptedException {
        long deadline = System.nanoTime() + LAUNCH_PATIENCE.toNanos();
        while (true) {
            record Seen(Set<String> missing, Optional<String> refused, boolean finished) {}
            Seen v = watch.read(j -> {
                Set<String> missing = new TreeSet<>(placement.nodes());
                missing.removeIf(j::answered);
                return new Seen(missing, j.launchFailure(), j.finished());
            }).orElse(new Seen(new TreeSet<>(placement.nodes()), Optional.empty(), false));
            Set<String> missing = v.missing();
            if (v.refused().isPresent()) {
                throw new IllegalStateException("job " + spec.job() + " cannot start: " + v.refused().get());
            }
            if (missing.isEmpty() || v.finished()) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("nodes " + missing + " did not start job " + spec.job() + " within "
                        + LAUNCH_PATIENCE.toSeconds()
                        + " s: is `ferry coordinator` running, and `ferry agent --node NAME"
                        + " --kafka " + spec.kafka().bootstrap() + "` on each of them?");
            }
            Thread.sleep(100);
        }
    }

    /** Stops the site's launcher, if it runs one (mpirun stops its ranks). */
    void stopLauncher() {
        if (launcher != null) {
            launcher.close();
        }
    }

    /** This host's agent of the job, in the one-node cluster. */
    Optional<NodeAgent> agent() {
        return agents == null ? Optional.empty() : agents.agent(spec.job());
    }

    /** Reads the job's view under the lock of its fold (see {@link JobWatch#read}). */
    <T> Optional<T> read(Function<JobView, T> what) {
        return watch.read(what);
    }

    Optional<JobView> view() {
        return watch.view();
    }

    boolean awaitFinish() throws InterruptedException {
        return watch.awaitFinish();
    }

    /** Lets staging of captured generations finish and their commit markers be written (bounded). */
    void settle(Duration max) throws InterruptedException {
        watch.settle(max);
    }

    @Override
    public void close() throws IOException {
        if (watch != null) {
            watch.close();
        }
        stopLauncher();
        if (agents != null) {
            agents.close();
        }
        if (agentMetrics != null) {
            agentMetrics.close();
        }
        if (services != null) {
            services.close();
        }
        if (homeLock != null) {
            homeLock.close();
        }
        if (ownLog != null) {
            ownLog.close();
        }
    }
}
