package io.ferry.agent;

import io.ferry.agent.capture.DmtcpBoard;
import io.ferry.agent.peer.PeerAuth;
import io.ferry.agent.peer.PeerEndpoint;
import io.ferry.agent.peer.PeerServer;
import io.ferry.eventlog.EpochHeader;
import io.ferry.eventlog.EventLines;
import io.ferry.eventlog.KafkaLog;
import io.ferry.model.Command;
import io.ferry.model.DaemonThreads;
import io.ferry.model.Event;
import io.ferry.model.EventCodec;
import io.ferry.model.Placement;
import io.ferry.model.RankSet;
import io.ferry.staging.Staging;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.WakeupException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The agent of one node ({@code ferry agent}): reads the commands addressed to its node and
 * serves every job that has ranks there, each through a {@link JobOnNode}. Commands of one
 * job run in order on that job's own thread, so a long restore of one job never delays a
 * checkpoint of another. A command that fails is reported and counted; the loop carries on.
 * Thread-safe.
 */
public final class AgentService implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(AgentService.class);
    private final KafkaLog log;
    private final String node;
    private final Path home;
    /** This agent's hold on its home: one agent per home. */
    private final HomeLock homeLock;
    private final Map<String, JobOnNode> jobs = new ConcurrentHashMap<>();
    private final Map<String, ExecutorService> lanes = new ConcurrentHashMap<>();
    private final AtomicLong failedCommands = new AtomicLong();
    private final Thread thread;
    private final KafkaConsumer<byte[], byte[]> commands;
    private volatile boolean running = true;

    private final Duration heartbeat;

    private final Map<String, String> secrets;
    /** Where ranks started by the site's launcher register, or null where this agent takes none. */
    private final RankSpool spool;
    /** This node's cache served to the other agents (partner copies, restarts elsewhere), or null. */
    private final PeerServer peers;
    /** What this agent answers the others about the DMTCP computations it leads (on the peer port). */
    private final DmtcpBoard board = new DmtcpBoard();
    private final PeerAuth peerAuth;
    /** This node's meters, or null where the process keeps none. */
    private volatile AgentMeters meters;

    /**
     * Whether {@code ferry chaos} may kill this node's ranks or the node itself ({@code ferry agent --allow-chaos}).
     */
    private volatile boolean chaos;

    /** Lets {@code ferry chaos} kill ranks here and lose this node (before {@link #start()}); refused otherwise. */
    public AgentService allowingChaos(boolean allowed) {
        this.chaos = allowed;
        return this;
    }

    public AgentService(KafkaLog log, String node, Path home) {
        this(log, node, home, NodeAgent.HEARTBEAT_INTERVAL, Map.of());
    }

    public AgentService(KafkaLog log, String node, Path home, Duration heartbeat, Map<String, String> secrets) {
        this(log, node, home, heartbeat, secrets, false);
    }

    /**
     * @param home      the node's directory: its cache is {@code home/cache}
     * @param heartbeat how often each job's heartbeat is sent: a fraction of the coordinator's timeout
     * @param secrets   store credentials known to this process (they never travel in the log), added to
     *                  every job's settings; empty: the store's own chain (environment, profile)
     * @param launcherRanks take ranks the site's launcher started on this host ({@code ferry rank}):
     *                  opens this host's {@link RankSpool}
     */
    public AgentService(KafkaLog log, String node, Path home, Duration heartbeat, Map<String, String> secrets,
                        boolean launcherRanks) {
        this(log, node, home, heartbeat, secrets, launcherRanks, null);
    }

    /**
     * @param peer where to serve this node's cache to the other agents (partner copies, restarts
     *             of its ranks elsewhere; null: not served, one node alone) and the secret its
     *             server requires and its own peer connections prove
     */
    public AgentService(KafkaLog log, String node, Path home, Duration heartbeat, Map<String, String> secrets,
                        boolean launcherRanks, PeerEndpoint peer) {
        InetSocketAddress peerListen = peer == null ? null : peer.listen();
        PeerAuth peerAuth = peer == null ? PeerAuth.NONE : peer.auth();
        this.log = log;
        this.peerAuth = peerAuth;
        this.secrets = Map.copyOf(secrets);
        this.heartbeat = heartbeat;
        this.node = Placement.requireNode(node);
        this.home = home;
        try {
            this.homeLock = HomeLock.take(home);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot lock the agent's home " + home + ": " + e.getMessage(), e);
        }
        try {
            this.spool = launcherRanks ? new RankSpool(home, RankSpool.hostName()) : null;
        } catch (IOException e) {
            releaseHome();
            throw new UncheckedIOException("cannot open the rank spool under " + home + ": "
                    + e.getMessage(), e);
        }
        try {
            this.peers = peerListen == null ? null
                    : new PeerServer(peerListen,
                            Staging.localCache(home.resolve("cache")),
                    peerAuth).answering(board::answer);
        } catch (IOException e) {
            releaseHome();
            throw new UncheckedIOException("cannot serve the cache to peers on " + peerListen + ": "
                    + e.getMessage(), e);
        }
        // Positioned before start() returns: a command sent after that is never missed.
        this.commands = log.commandsFor(node);
        this.thread = DaemonThreads.unstarted("ferry-agent-" + node, this::run);
    }

    /** How long the cache of a job that is over stays here, or null where this agent reclaims nothing. */
    private volatile CacheRetention retention;
    private CacheReclaimer reclaimer;

    /**
     * Reclaims this node's cache from the jobs that no longer need it, after {@code r} (before
     * {@link #start()}); see {@link CacheReclaimer}. Without it the cache keeps them.
     */
    public AgentService reclaiming(CacheRetention r) {
        this.retention = Objects.requireNonNull(r, "retention");
        return this;
    }

    /** Feeds {@code m} with every job's reports and store on this node (before {@link #start()}). */
    public AgentService metered(AgentMeters m) {
        this.meters = m;
        return this;
    }

    public AgentService start() {
        thread.start();
        if (retention != null) {
            reclaimer = new CacheReclaimer(log, node,
                    Staging.localCache(home.resolve("cache")), retention,
                    Clock.systemUTC(), jobs::containsKey,
                    (job, task) -> CompletableFuture.runAsync(task, lane(job)), () -> meters)
                    .start();
        }
        return this;
    }

    public String node() {
        return node;
    }


    /** The job's agent on this node, while this node runs ranks of it. */
    public Optional<NodeAgent> agent(String job) {
        return Optional.ofNullable(jobs.get(job)).flatMap(JobOnNode::agent);
    }

    /** Where ranks of a launcher find this agent, if it takes them. */
    public Optional<Path> rankLink() {
        return Optional.ofNullable(spool).map(RankSpool::link);
    }

    /** Where this node's cache is served to the other agents ({@code HOST:PORT}), if it is. */
    public Optional<String> peerAddress() {
        return Optional.ofNullable(peers).map(PeerServer::address);
    }

    /** Commands that failed on this node since it started (each was reported). */
    public long failedCommands() {
        return failedCommands.get();
    }

    private void run() {
        MDC.put("node", node); // on every log line of this thread
        try {
            while (running) {
                for (ConsumerRecord<byte[], byte[]> r : commands.poll(Duration.ofMillis(100))) {
                    if (node.equals(new String(r.key(), StandardCharsets.UTF_8)) && forThisAgent(r)) {
                        dispatch(r);
                    }
                }
                if (spool != null) {
                    announceArrivals();
                }
            }
        } catch (InterruptException | WakeupException e) {
            // closing
        } finally {
            KafkaLog.closeNow(commands);
        }
    }

    /** This agent's epoch under its node name ({@link io.ferry.eventlog.NodeClaim}), or -1: it takes every command. */
    private volatile long epoch = -1;
    private final AtomicLong superseded = new AtomicLong();

    /**
     * The epoch this agent claimed its node name at (before {@link #start()}): a command stamped
     * with a higher one is for a newer agent of the name, and this one leaves it alone.
     */
    public AgentService claimedAt(long epoch) {
        this.epoch = epoch;
        return this;
    }

    private boolean forThisAgent(ConsumerRecord<byte[], byte[]> r) {
        long stamped = EpochHeader.of(r);
        if (epoch < 0 || stamped <= epoch) {
            return true; // for this agent, or sent before the coordinator heard of it
        }
        if (superseded.getAndIncrement() == 0) {
            LOG.error("ferry agent {}: a newer agent runs under this node name (epoch {}, this one's {}): its commands"
                    + " are left to it; stop this agent", node, stamped, epoch);
        }
        return false;
    }

    /** Commands left to a newer agent of this node name since this one started. */
    public long supersededCommands() {
        return superseded.get();
    }

    /** Ranks that registered with this node: the coordinator learns where they are and answers with a launch. */
    private void announceArrivals() {
        try {
            record Attempt(String job, long generation) {}
            Map<Attempt, List<Integer>> joined = new LinkedHashMap<>();
            for (RankSpool.Hello h : spool.arrivals()) {
                joined.computeIfAbsent(new Attempt(h.job(), h.generation()),
                        k -> new ArrayList<>()).add(h.rank());
            }
            joined.forEach((k, ranks) -> log.append(new Event.RanksJoined(k.job(), k.generation(), node,
                    RankSet.of(ranks.stream().mapToInt(Integer::intValue)).toString())));
        } catch (IOException | RuntimeException e) {
            LOG.warn("reading registered ranks failed, retrying: {}", e.getMessage());
        }
    }

    private void dispatch(ConsumerRecord<byte[], byte[]> r) {
        Command c;
        try {
            c = EventCodec.decodeCommand(r.value());
        } catch (IllegalArgumentException bad) {
            failedCommands.incrementAndGet();
            LOG.warn("ignoring malformed command at offset {}: {}", r.offset(),
                    EventLines.oneLine(bad.getMessage()));
            return;
        }
        if ((c instanceof Command.KillNode || c instanceof Command.KillRank) && !chaos) {
            // Whoever can write the log could otherwise kill any job's ranks here: chaos is opted into.
            LOG.warn("ferry agent {}: chaos refused ({} of {}): this agent was not started with --allow-chaos", node,
                    c.getClass().getSimpleName(), c.job());
            return;
        }
        if (c instanceof Command.KillNode) {
            NodeKill.now(node, home, jobs.values());
            return;
        }
        if (c instanceof Command.Launch l && l.launchId() > 0) {
            // before the lane: a launch under way sees it's superseded
            board.launched(l.job(), l.launchId());
        }
        lane(c.job()).execute(() -> {
            MDC.put("node", node); // the lane's log lines name their node and job
            MDC.put("job", c.job());
            try {
                handle(c);
            } finally {
                MDC.clear();
            }
        });
    }

    /** The thread the job's commands run on, in order (and the removal of its cache, never beside them). */
    private ExecutorService lane(String job) {
        return lanes.computeIfAbsent(job, j -> Executors.newSingleThreadExecutor(
                DaemonThreads.named("ferry-agent-job-" + j)));
    }

    private void handle(Command c) {
        try {
            if (c instanceof Command.Launch l) {
                JobOnNode j = jobs.computeIfAbsent(l.job(),
                        job -> new JobOnNode(new NodeServices(log, node, home, heartbeat,
                        secrets, spool, meters, () -> !running),
                        new Peering(peerAddress().orElse(null), peerAuth, board)));
                j.launch(l);
                if (l.rankSet().isEmpty()) {
                    jobs.remove(l.job(), j);
                }
            } else if (c instanceof Command.Capture cap) {
                JobOnNode j = jobs.get(cap.job());
                if (j != null) {
                    j.capture(cap.generation(), cap.partner());
                }
            } else if (c instanceof Command.Release rel) {
                JobOnNode j = jobs.remove(rel.job());
                if (j != null) {
                    j.release();
                }
                board.release(rel.job());
            } else if (c instanceof Command.PlanRestart p) {
                log.append(RestartPlan.of(p, node, home.resolve("cache"), secrets, peerAuth));
            } else if (c instanceof Command.KillRank k) {
                JobOnNode j = jobs.get(k.job());
                boolean killed = j != null && j.kill(k.rank());
                LOG.info("ferry agent " + node + ": chaos: rank " + k.rank() + " of " + k.job()
                        + (killed ? " killed (SIGKILL)" : " does not run here"));
            } else if (c instanceof Command.Restart || c instanceof Command.RequestCheckpoint
                    || c instanceof Command.Halt) {
                // the coordinator's commands, on a partition this node shares
            } else {
                throw new AssertionError(c);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            if (RestoreErrors.superseded(e)) {
                LOG.info("ferry agent " + node + ": " + c.getClass().getSimpleName() + " of job " + c.job()
                        + " given up for the newer one already received: " + e.getMessage());
                return;
            }
            failedCommands.incrementAndGet();
            if (c instanceof Command.Launch l) { // tell the job, not only this node's log: its submitter is waiting
                try { // a program missing here or a store this node cannot open says nothing against the generation
                    log.append(new Event.RestoreFailed(l.job(), l.generation(), node, e.getMessage(),
                            RestoreErrors.storeUnreachable(e), RestoreErrors.provenBad(e), true));
                } catch (RuntimeException unreported) {
                    // the log is away too; the coordinator's heartbeat check will notice
                }
            }
            LOG.warn("ferry agent " + node + ": " + c.getClass().getSimpleName() + " of job " + c.job()
                    + " failed: " + e.getMessage());
        }
    }

    @Override
    public void close() {
        running = false;
        if (reclaimer != null) {
            reclaimer.close();
        }
        try {
            thread.join(3000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        lanes.values().forEach(ExecutorService::shutdown);
        for (ExecutorService lane : lanes.values()) {
            try {
                lane.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        jobs.values().forEach(JobOnNode::close);
        jobs.clear();
        if (peers != null) {
            try {
                peers.close();
            } catch (IOException e) {
                LOG.warn("ferry agent " + node + ": closing the peer server: " + e.getMessage());
            }
        }
        if (spool != null) {
            try {
                spool.close();
            } catch (IOException e) {
                LOG.warn("ferry agent " + node + ": closing the rank spool: " + e.getMessage());
            }
        }
        releaseHome();
    }

    /** Lets the home go (at the close, or when the constructor fails after taking it). */
    private void releaseHome() {
        try {
            homeLock.close();
        } catch (IOException e) {
            LOG.warn("ferry agent " + node + ": releasing the lock of its home: " + e.getMessage());
        }
    }
}
