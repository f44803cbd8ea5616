package io.ferry.cli;

import io.ferry.agent.AgentConfig;
import io.ferry.agent.NodeAgent;
import io.ferry.agent.Quiesce;
import io.ferry.coordinator.Coordinator;
import io.ferry.coordinator.EmbeddedKafka;
import io.ferry.coordinator.JobView;
import io.ferry.coordinator.KafkaLog;
import io.ferry.coordinator.http.HttpApi;
import io.ferry.model.Event;
import io.ferry.staging.LocalCache;
import io.ferry.staging.Staging;

import java.io.Closeable;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One job on this machine, end to end: the event log (embedded KRaft broker unless
 * {@code --kafka}), the coordinator, this node's agent and its command loop. Used by
 * {@code ferry run} and {@code ferry demo}.
 */
final class JobRunner implements Closeable {
    record Spec(String job, int ranks, Duration interval, boolean autoRecover, String store, FerryHome home,
                String kafka, Quiesce quiesce, List<String> command, Map<String, String> settings, String http) {}

    /** Where the dashboard and HTTP API listen unless {@code --http} says otherwise: loopback only (no authentication). */
    static final String DEFAULT_HTTP = "127.0.0.1:7460";

    private final Spec spec;
    private final String node;
    private EmbeddedKafka kafka;
    private KafkaLog log;
    private StoreOptions.Opened opened;
    private Coordinator coordinator;
    private HttpApi http;
    private NodeAgent agent;
    private AgentLoop loop;

    JobRunner(Spec spec) {
        this.spec = spec;
        this.node = nodeName();
    }

    private static String nodeName() {
        try {
            return InetAddress.getLocalHost().getHostName().replaceAll("[^A-Za-z0-9._-]", "_");
        } catch (IOException e) {
            return "localhost";
        }
    }

    void start(PrintStream out) throws IOException, InterruptedException {
        io.ferry.model.Names.requireJob(spec.job());
        if (spec.kafka() == null) {
            Optional<java.util.Properties> other = spec.home().activeRun();
            if (other.isPresent()) {
                throw new IllegalStateException("job " + other.get().getProperty("job") + " (pid " + other.get().getProperty("pid")
                        + ") already runs from " + spec.home().dir() + "; use another --home or --kafka");
            }
            kafka = EmbeddedKafka.start(spec.home().kafka(), Duration.ofSeconds(60)); // a status command may hold it
        }
        String bootstrap = kafka != null ? kafka.bootstrapServers() : spec.kafka();
        log = new KafkaLog(bootstrap);
        spec.home().writeRun(spec.job(), bootstrap);
        opened = StoreOptions.open(spec.store(), spec.settings());
        LocalCache cache = Staging.localCache(spec.home().cache());
        long t0 = System.nanoTime();
        coordinator = new Coordinator(log, opened.pipeline().repository(), Clock.systemUTC())
                .onEvent(new EventPrinter(out, t0, this::view)).start();
        if (!coordinator.awaitLive(Duration.ofSeconds(60))) {
            throw new IOException("the coordinator did not catch up with the log at " + bootstrap + " within 60 s");
        }
        http = startHttp(spec.http(), out);
        agent = new NodeAgent(new AgentConfig(spec.job(), spec.ranks(), node, spec.command(), spec.quiesce(),
                java.nio.file.Path.of(System.getProperty("java.io.tmpdir"))), cache, opened.pipeline(), log::append);
        loop = new AgentLoop(log, node, agent, opened.pipeline(), cache).start();
        log.append(new Event.JobStarted(spec.job(), spec.ranks(), spec.interval().toMillis(), spec.autoRecover(),
                opened.store().uri().toString(), node));
        agent.launch(-1, Map.of());
        out.printf(java.util.Locale.ROOT, "ferry: job %s: %d ranks on %s, checkpoint every %.1f s, store %s, log %s%n",
                spec.job(), spec.ranks(), node, spec.interval().toMillis() / 1000.0, opened.store().uri(), bootstrap);
    }

    /**
     * Serves the dashboard and API on {@code address} ("HOST:PORT", or "off"); when the port is
     * taken (another job on this machine), on any free port, said on {@code out}.
     */
    private HttpApi startHttp(String address, PrintStream out) throws IOException {
        Optional<InetSocketAddress> a = httpAddress(address);
        if (a.isEmpty()) {
            return null;
        }
        HttpApi api;
        try {
            api = HttpApi.start(coordinator, a.get());
        } catch (java.net.BindException e) {
            api = HttpApi.start(coordinator, new InetSocketAddress(a.get().getAddress(), 0));
            out.println("ferry: port " + a.get().getPort() + " is taken; the dashboard listens on another port");
        }
        out.println("ferry: dashboard " + api.uri() + " (JSON under " + api.uri() + "api/jobs, Prometheus " + api.uri() + "metrics)");
        return api;
    }

    /** {@code HOST:PORT} (port 0: any) or {@code off}; anything else is a one-line error. */
    static Optional<InetSocketAddress> httpAddress(String text) {
        if (text == null || text.equals("off")) {
            return Optional.empty();
        }
        int colon = text.lastIndexOf(':');
        String why = "--http must be HOST:PORT (e.g. " + DEFAULT_HTTP + ") or off, got '" + text + "'";
        if (colon <= 0) {
            throw new IllegalArgumentException(why);
        }
        int port;
        try {
            port = Integer.parseInt(text.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(why);
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException(why);
        }
        String host = text.substring(0, colon).replaceAll("^\\[|]$", "");
        InetSocketAddress a = new InetSocketAddress(host, port);
        if (a.isUnresolved()) {
            throw new IllegalArgumentException("--http: cannot resolve host '" + host + "'");
        }
        return Optional.of(a);
    }

    NodeAgent agent() {
        return agent;
    }

    Optional<JobView> view() {
        return coordinator.query(j -> j.get(spec.job()));
    }

    <T> T query(java.util.function.Function<io.ferry.coordinator.Jobs, T> q) {
        return coordinator.query(q);
    }

    /** Waits for the job to finish; returns whether every rank exited 0. */
    boolean awaitFinish() throws InterruptedException {
        while (true) {
            Optional<Boolean> done = coordinator.query(j -> j.get(spec.job()).flatMap(JobView::success));
            if (done.isPresent()) {
                return done.get();
            }
            Thread.sleep(100);
        }
    }

    /** Lets staging of captured generations finish, then waits for their commit markers (bounded). */
    void settle(Duration max) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        try {
            agent.drainStaging();
        } catch (java.util.concurrent.ExecutionException e) {
            return;
        }
        while (System.nanoTime() < deadline && coordinator.query(j -> j.get(spec.job()).map(v -> v.generations().stream()
                .anyMatch(g -> g.state() == io.ferry.coordinator.GenerationView.State.CAPTURED
                        && g.stagedRanks() >= v.ranks())).orElse(false))) {
            Thread.sleep(100);
        }
    }

    @Override
    public void close() throws IOException {
        if (loop != null) {
            loop.close();
        }
        if (agent != null) {
            agent.close();
        }
        if (http != null) {
            http.close();
        }
        if (coordinator != null) {
            coordinator.close();
        }
        if (log != null) {
            log.close();
        }
        if (opened != null) {
            opened.close();
        }
        if (kafka != null) {
            kafka.close();
        }
        spec.home().clearRun();
    }
}
