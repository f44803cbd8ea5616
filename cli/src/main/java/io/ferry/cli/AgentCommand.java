package io.ferry.cli;

import io.ferry.agent.AgentService;
import io.ferry.agent.CacheRetention;
import io.ferry.agent.MetricsEndpoint;
import io.ferry.agent.RankSpool;
import io.ferry.agent.peer.PeerAuth;
import io.ferry.agent.peer.PeerEndpoint;
import io.ferry.eventlog.EmbeddedAuth;
import io.ferry.eventlog.HostPort;
import io.ferry.eventlog.KafkaLog;
import io.ferry.eventlog.LogSettings;
import io.ferry.eventlog.NodeClaim;
import io.ferry.model.ConfigKey;
import io.ferry.model.Durations;
import io.ferry.model.OwnerOnly;
import io.ferry.model.Placement;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.Closeable;
import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/** {@code ferry agent}: one node's agent, serving every job with ranks on the node until stopped. */
@Command(name = "agent", mixinStandardHelpOptions = true,
        description = "Run this node's agent: launches, checkpoints, stages and restores the ranks placed here.")
final class AgentCommand implements Callable<Integer> {
    @Option(names = "--kafka", required = true, paramLabel = "HOST:PORT", description = "The coordinator's Kafka log.")
    String kafka;
    @Option(names = "--node", paramLabel = "NAME",
            description = {"This node's name in placements (default: the host name).",
            "One agent per name: refused while an agent of another host or home",
            "holds it."})
    String node;
    @Option(names = "--home", paramLabel = "DIR",
            description = "The node's directory: its cache is DIR/cache (default: $FERRY_HOME or ~/.ferry).")
    Path home;

    @Option(names = "--heartbeat", defaultValue = "5s", paramLabel = "DURATION",
            description = {
                    "How often the agent tells the coordinator it is alive; keep it a third of the coordinator's",
                    "--heartbeat-timeout or less. Default ${DEFAULT-VALUE}."})
    String heartbeat;

    @Option(names = "--peer-listen", paramLabel = "HOST:PORT|off",
            description = {
                    "Where this node's cache is served to the other agents (partner copies, restarts of its ranks",
                    "on other nodes): an address the other nodes reach this one at. Default: the address this host",
                    "reaches --kafka from, on any free port. 'off': not served."})
    String peerListen;
    @Option(names = "--allow-chaos",
            description = {"Let `ferry chaos` kill this node's ranks or lose this node (to test a setup).",
            "Without it, chaos commands are refused here: whoever can write the event log could"
                    + " otherwise kill any job."})
    boolean allowChaos;

    @Override
    public Integer call() throws Exception {
        String name = Placement.requireNode(node != null ? node : JobRunner.nodeName());
        FerryHome h = FerryHome.resolve(home);
        Duration every = Durations.parse(heartbeat);
        if (every.isZero()) {
            throw new IllegalArgumentException("--heartbeat must be positive");
        }
        var metricsAt = AgentMetrics.configured(System.getenv()); // a bad agent.metrics fails before anything starts
        CacheRetention retention = cacheRetention(); // and so does a bad cache.*-retention
        OwnerOnly.createDirectories(h.dir());
        Closeable homeLock = h.lockAgent(); // one agent per home: before it touches the cache or the log
        CountDownLatch stop = new CountDownLatch(1);
        InetSocketAddress bind = peerBind();
        PeerEndpoint peer = bind == null ? null
                : new PeerEndpoint(bind, peerAuth(bind));
        // kafka.*: this host's TLS/SASL login
        KafkaLog log = new KafkaLog(kafka, KafkaAccess.configured(kafka).client(), LogSettings.EXTERNAL);
        if (log.requester() != null) { // a user's agent could claim another's node name and be sent its jobs
            log.close();
            throw new IllegalArgumentException("ferry agent needs an operator's login: login " + log.requester()
                    + " controls only its own jobs (" + EmbeddedAuth.OPERATORS_KEY
                    + " on the coordinator)");
        }
        // Credentials: the configuration file and FERRY_* variables of this host (never the log); the SDKs' own
        // environment as well. Ranks a launcher starts on this host find this agent by its host name.
        AgentService agent;
        try {
            agent = new AgentService(log, name, h.dir(), every, Configuration.secrets(System.getenv()), true, peer)
                    .allowingChaos(allowChaos).reclaiming(retention);
        } catch (RuntimeException e) {
            log.close();
            homeLock.close();
            throw e;
        }
        NodeClaim claim;
        try { // one agent per node name: refused while another host's or home's agent holds it
            claim = NodeClaim.claim(log, name, RankSpool.hostName(),
                    h.dir().toAbsolutePath().toString(), every, agent.peerAddress().orElse(""));
        } catch (RuntimeException taken) {
            agent.close();
            log.close();
            homeLock.close();
            throw taken;
        }
        agent.claimedAt(claim.epoch());
        MetricsEndpoint metrics = AgentMetrics.start(agent, metricsAt, System.out);
        agent.start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            claim.close();
            agent.close();
            if (metrics != null) {
                metrics.close();
            }
            log.close();
            try {
                homeLock.close();
            } catch (IOException ignored) {
                // the process ends: the kernel lets go of the lock anyway
            }
            stop.countDown();
        }, "ferry-agent-stop"));
        System.out.println("ferry agent " + name + ": serving commands from " + kafka + ", cache " + h.cache()
                + agent.peerAddress().map(a -> " (served to peers at " + a + ")").orElse("")
                + agent.rankLink().map(l -> ", ranks of launchers register via " + l).orElse(""));
        System.out.flush();
        stop.await();
        return 0;
    }

    /**
     * This host's {@code cache.*-retention} settings (its configuration file, {@code FERRY_CACHE_*}); a bad one fails
     * here.
     */
    /** The cache retention of this host's configuration ({@code cache.*-retention}): a bad value fails here. */
    static CacheRetention cacheRetention() throws IOException {
        Map<String, String> set = new HashMap<>();
        for (ConfigKey<?> k : CacheRetention.TABLE.keys()) {
            Configuration.processSetting(k.name(), System.getenv()).ifPresent(v -> set.put(k.name(), v));
        }
        return CacheRetention.of(set);
    }

    /**
     * The agents' shared secret ({@code peer.secret-file}): required where the peer port is beyond
     * loopback, since whoever reaches it could otherwise read every cached image (process memory)
     * and plant partner copies.
     */
    private static PeerAuth peerAuth(InetSocketAddress bind) throws IOException {
        Optional<String> file = Configuration.processSetting(PeerAuth.KEY,
                System.getenv());
        if (file.isPresent()) {
            return PeerAuth.fromFile(Path.of(file.get()));
        }
        if (bind.getAddress() != null && !bind.getAddress().isLoopbackAddress()) {
            throw new IllegalArgumentException("the peer port " + bind.getAddress().getHostAddress()
                    + " is beyond loopback,"
                    + " where it requires the agents' shared secret: set " + PeerAuth.KEY
                    + "=PATH (an owner-only file, the same on every node) in $FERRY_CONFIG or as"
                    + " FERRY_PEER_SECRET_FILE,"
                    + " or give --peer-listen off");
        }
        return PeerAuth.NONE;
    }

    /** The peer server's address: given, or the one this host reaches the first Kafka bootstrap server from. */
    private InetSocketAddress peerBind() throws IOException {
        if ("off".equals(peerListen)) {
            return null;
        }
        if (peerListen != null) {
            HostPort hp = HostPort.parse(peerListen, "--peer-listen");
            if (hp.wildcard()) {
                throw new IllegalArgumentException("--peer-listen " + peerListen + ": give the address the other nodes"
                        + " reach this one at (it is what they are told), not a wildcard");
            }
            return new InetSocketAddress(hp.host(), hp.port());
        }
        HostPort k = HostPort.parse(kafka.split(",")[0].trim(), "--kafka");
        try (DatagramSocket probe = new DatagramSocket()) {
            probe.connect(new InetSocketAddress(k.host(), k.port())); // a route lookup: nothing is sent
            InetAddress here = probe.getLocalAddress();
            if (here == null || here.isAnyLocalAddress()) {
                throw new IllegalArgumentException("cannot tell which address reaches " + kafka
                        + "; give --peer-listen");
            }
            return new InetSocketAddress(here, 0);
        }
    }
}
