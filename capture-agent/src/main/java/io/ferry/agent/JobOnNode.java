package io.ferry.agent;

import io.ferry.eventlog.KafkaLog;
import io.ferry.model.Command;
import io.ferry.model.Event;
import io.ferry.model.ImageRef;
import io.ferry.model.LaunchSpec;
import io.ferry.model.OwnerOnly;
import io.ferry.model.PeerAddresses;
import io.ferry.staging.CommittedDigests;
import io.ferry.staging.LocalCache;
import io.ferry.staging.OpenedStore;
import io.ferry.staging.Progress;
import io.ferry.staging.PullImage;
import io.ferry.staging.Staging;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * One job's life on one node, driven by its commands: a {@link Command.Launch} (re)starts
 * the node's ranks, from verified images when it names a generation; captures go to the
 * job's {@link NodeAgent}; a release lets staging finish and lets go. Not thread-safe: the
 * {@link AgentService} runs one job's commands on one thread.
 */
final class JobOnNode {
    private static final Logger LOG = LoggerFactory.getLogger(JobOnNode.class);
    private final KafkaLog log;
    private final String node;
    private final LocalCache cache;
    private final Duration heartbeat;
    private final Map<String, String> secrets;
    private final RankSpool spool;
    /** Where this node's cache is served to peers ({@code HOST:PORT}), or null where it is not. */
    private final Peering peering;
    private Command.Launch current;
    private NodeAgent agent;
    private OpenedStore store;

    /** The agent is closing: a report still waiting for the event log gives up. */
    private final BooleanSupplier stopping;
    /** Set when the current {@link NodeAgent} closes: its reports still waiting for the log give up. */
    private AtomicBoolean agentClosed = new AtomicBoolean();

    /** This node's meters (fed with the agent's reports, reading the job's store), or null where none are kept. */
    private final AgentMeters meters;

    /** @param peering where this node serves its cache to the other agents (or null), and its secret */
    JobOnNode(NodeServices services, Peering peering) {
        this.log = services.log();
        this.meters = services.meters();
        this.stopping = services.stopping();
        this.peering = peering;
        this.spool = services.spool();
        this.secrets = services.secrets();
        this.heartbeat = services.heartbeat();
        this.node = services.node();
        this.cache = Staging.localCache(services.home().resolve("cache"));
    }

    Optional<NodeAgent> agent() {
        return Optional.ofNullable(agent);
    }

    /** Stops whatever runs, restores {@code l.generation()} verified (if >= 0), reports, launches. */
    void launch(Command.Launch l) throws IOException, InterruptedException {
        if (l.adopt()) {
            adopt(l);
            return;
        }
        if (agent != null) {
            agent.stopRanks();
        }
        if (l.rankSet().isEmpty()) {
            close();
            return;
        }
        if (agent == null) { // the job's first launch on this node since this agent started
            dropLeftLineage(l);
        }
        open(l, true);
        Map<Integer, Path> dirs = new HashMap<>();
        if (!restored(l, dirs)) {
            return; // the coordinator picks an older generation and sends another launch
        }
        agent.launch(l.generation(), dirs, peering.span(l, node));
    }

    /**
     * Ranks the site's launcher started joined here ({@code ferry rank}): restore their images
     * of {@code l.generation()}, then let each waiting shim exec its program with its
     * environment. The node's other ranks of the job are left alone.
     */
    private void adopt(Command.Launch l) throws IOException {
        if (spool == null) {
            throw new IOException("this agent takes no ranks from a launcher");
        }
        Map<Integer, RankSpool.Hello> waiting = new TreeMap<>();
        for (int r : l.rankSet().toList()) {
            spool.take(l.job(), r).filter(h -> h.generation() == l.generation()).ifPresent(h -> waiting.put(r, h));
        }
        if (waiting.isEmpty()) {
            return; // answered already, or gone
        }
        try {
            if (agent == null) { // the first ranks of the job on this node: none of its generations is being made here
                dropLeftLineage(l);
            }
            open(l, false);
        } catch (IOException | RuntimeException e) {
            waiting.values()
                    .forEach(h -> spool.refuse(h.job(), h.rank(), "cannot open the job's store: " + e.getMessage()));
            throw e;
        }
        Map<Integer, Path> dirs = new HashMap<>();
        if (!restored(l, dirs)) {
            waiting.values().forEach(h -> spool.refuse(h.job(), h.rank(), "generation " + l.generation()
                    + " cannot be restored on " + node
                    + " (see the job's events); the coordinator picks an older one"));
            return;
        }
        for (RankSpool.Hello h : waiting.values()) {
            try {
                spool.answer(h, agent.adopt(h.rank(), h.pid(), l.generation(), dirs.get(h.rank())));
            } catch (IOException e) {
                spool.refuse(h.job(), h.rank(), e.getMessage());
            }
        }
    }

    /**
     * At the job's first launch on this node since this agent started, drops from the cache
     * every generation of the job newer than the one {@code l} starts its ranks from (all of
     * them for a fresh start): an earlier agent made them, in the history the job now leaves.
     * Kept, they would be taken for the new generations of the same numbers: after the event
     * log lost its tail (a power cut of the broker's host), the coordinator numbers new
     * generations above the newest it knows or finds on the store, so generation g+1 is asked
     * again while the cache holds the g+1 of before the cut. The agent took that capture for a
     * repeat and ignored it, and restaged the old images as the new generation's; the job ran on
     * without a checkpoint. Runs before the job's agent opens, so its restaging of what an
     * earlier agent left unstaged never sees them. (An agent that stays up while the log loses
     * its tail keeps its newer generations: see docs/operators.md.)
     */
    private void dropLeftLineage(Command.Launch l) throws IOException {
        for (long g : cache.generations(l.job())) {
            if (g > l.generation()) {
                LOG.warn("ferry agent " + node + ": generation " + g + " of " + l.job()
                        + " dropped from this node's cache:"
                        + " the job starts again from "
                        + (l.generation() >= 0 ? "generation " + l.generation() : "the start")
                        + ", so its newer generations are a history it left");
                cache.drop(l.job(), g);
            }
        }
    }

    /**
     * Opens the job's store and agent unless open with the same settings; {@code sameRanks}:
     * an agent of other ranks is replaced (a launch by Ferry names all of the node's ranks).
     */
    private void open(Command.Launch l, boolean sameRanks) throws IOException {
        if (current == null || !current.store().equals(l.store()) || !current.launch().equals(l.launch())) {
            close();
            store = OpenedStore.open(l.store(), OpenedStore.withSecrets(l.store(), l.launch().settings(), secrets));
            if (meters != null) {
                meters.opened(l.job(), store);
            }
        } else if (sameRanks && agent != null && !current.ranks().equals(l.ranks())) {
            agentClosed.set(true);
            agent.close();
            agent = null;
        }
        current = l;
        if (agent == null) {
            LaunchSpec s = l.launch();
            agent = new NodeAgent(new AgentConfig(l.job(), l.rankSet(), l.nranks(), node, s.program(),
                    new Quiesce(s.capture(), Duration.ofMillis(s.captureTimeoutMillis()), s.signal()),
                    OwnerOnly.privateRuntimeDir(System.getenv())), cache, store.pipeline(),
                    patient(), heartbeat);
            if (peering.address() != null) {
                agent.announcePeer(peering.address());
            }
        }
    }

    /**
     * Restores {@code l}'s ranks of its generation into {@code dirs} (nothing for -1) and reports
     * {@link Event.ImagesRestored}, or {@link Event.RestoreFailed} and returns false.
     */
    private boolean restored(Command.Launch l, Map<Integer, Path> dirs) {
        if (l.generation() >= 0) {
            Map<Integer, String> sources = new HashMap<>();
            for (int attempt = 1; ; attempt++) {
                try {
                    restore(l, dirs, sources);
                    break;
                } catch (IOException e) {
                    boolean away = RestoreErrors.storeUnreachable(e);
                    if (!away || attempt >= RESTORE_ATTEMPTS) {
                        report(new Event.RestoreFailed(l.job(), l.generation(), node, e.getMessage(), away,
                                RestoreErrors.provenBad(e)));
                        return false;
                    }
                    long wait = Math.min(30_000, 2_000L << (attempt - 1));
                    LOG.warn("ferry agent " + node + ": restoring generation " + l.generation() + " of " + l.job()
                            + ": the store is unreachable (" + e.getMessage() + "); trying again in " + wait / 1000
                            + " s (attempt " + attempt + " of " + RESTORE_ATTEMPTS + ")");
                    try {
                        Thread.sleep(wait);
                    } catch (InterruptedException stop) {
                        Thread.currentThread().interrupt();
                        return false;
                    }
                    sources.clear();
                    dirs.clear();
                }
            }
            report(new Event.ImagesRestored(l.job(), l.generation(), node, sources));
        } else if (l.adopt()) { // the coordinator counts a launcher's ranks running from these
            Map<Integer, String> none = new HashMap<>();
            l.rankSet().stream().forEach(r -> none.put(r, "none"));
            report(new Event.ImagesRestored(l.job(), -1, node, none));
        } else if (!"start".equals(l.cause())) {
            report(new Event.ImagesRestored(l.job(), -1, node, Map.of()));
        }
        return true;
    }

    /**
     * What the node's agent reports (a rank's exit, a capture, a staged image) waits out an event
     * log outage instead of being lost with it: the coordinator acts on nothing else. A closed
     * agent's reports give up. Heartbeats are sent without waiting.
     */
    private Consumer<Event> patient() {
        AtomicBoolean closed = new AtomicBoolean();
        agentClosed = closed;
        return e -> onThisNode(() -> {
            if (meters != null) {
                meters.observe(e); // when it happened, not once the log took it
            }
            if (e instanceof Event.Heartbeat) {
                log.offer(e); // stale once late; never holds up the agent's poller (signal-mode DONE files)
            } else {
                log.appendPatiently(e, () -> closed.get() || stopping.getAsBoolean());
            }
        });
    }

    /** A report of this node's restores, waiting out an event log outage as the agent's reports do. */
    private void report(Event e) {
        onThisNode(() -> log.appendPatiently(e, stopping));
    }

    /** Runs {@code append} with this node in the MDC: the node of the event's log line ({@code EventLines}). */
    private void onThisNode(Runnable append) {
        String before = MDC.get("node");
        MDC.put("node", node);
        try {
            append.run();
        } finally {
            if (before == null) {
                MDC.remove("node");
            } else {
                MDC.put("node", before);
            }
        }
    }

    /**
     * Tries of a restore the store's unavailability fails (2, 4, 8, 16 s between them, after the store's own retries).
     */
    static final int RESTORE_ATTEMPTS = 5;

    /** SIGKILLs rank {@code rank} here, if it runs here ({@code ferry chaos kill-rank}). */
    boolean kill(int rank) {
        return agent != null && agent.kill(rank);
    }

    /** Materialises every rank of this node from the nearest tier that verifies, after checking the commit marker. */
    private void restore(Command.Launch l, Map<Integer, Path> dirs, Map<Integer, String> sources) throws IOException {
        Optional<String> refused = agent.cannotRestore();
        if (refused.isPresent()) {
            throw new IOException(refused.get());
        }
        // Checked here, by the node, not taken on the coordinator's word: an image is never
        // restored from a generation whose snapshot was not committed.
        // The marker is read once for the node (its head and the shards its ranks fall in), and every
        // tier of every rank is checked against the manifest digest it gives.
        CommittedDigests committed = store.pipeline().repository().committed(l.job(), l.generation())
                .orElseThrow(() -> new RestoreErrors.NotCommitted("generation " + l.generation() + " of " + l.job()
                        + " has no commit marker on " + l.store()));
        Set<String> unreachable = new HashSet<>();
        List<PullImage> remote = new ArrayList<>();
        List<String> digests = new ArrayList<>();
        for (int r : l.rankSet().toList()) {
            Path dir = cache.root().resolve(l.job()).resolve(".restart").resolve(Integer.toString(r));
            ImageRef ref = new ImageRef(l.job(), l.generation(), r);
            String digest = committed.manifestSha256(r);
            Optional<String> near = RestartSource.nearby(store.pipeline(), cache, ref, dir,
                    PeerAddresses.parse(l.peers().getOrDefault(r, "")), unreachable, digest,
                    peering.auth());
            if (near.isPresent()) {
                sources.put(r, near.get());
            } else {
                remote.add(new PullImage(ref, dir));
                digests.add(digest);
            }
            dirs.put(r, dir);
        }
        // The ranks no cache holds, from the store together: what they share (code, read-only data) is read once.
        store.pipeline().pullAllCommitted(remote, digests, Progress.NONE);
        remote.forEach(i -> sources.put(i.ref().rank(), "remote"));
    }

    /** @param partner the node that keeps a copy of this node's images ({@code NODE=HOST:PORT}), or empty */
    void capture(long generation, String partner) {
        if (agent != null) {
            agent.checkpoint(generation, partner, peering.auth());
        }
    }

    /** The job is over: let queued staging finish (bounded), then stop everything of it here. */
    void release() throws InterruptedException {
        if (agent != null) {
            try {
                agent.stagingIdle().get(60, TimeUnit.SECONDS);
            } catch (ExecutionException | TimeoutException e) {
                LOG.warn("ferry agent " + node + ": staging of " + current.job()
                        + " did not finish within 60 s; its images stay in the cache");
            }
        }
        close();
    }

    void close() {
        try {
            if (agent != null) {
                agentClosed.set(true);
                agent.close();
            }
            if (store != null) {
                if (meters != null && current != null) {
                    meters.closed(current.job());
                }
                store.close();
            }
        } catch (IOException e) {
            LOG.warn("ferry agent " + node + ": closing a job: " + e.getMessage());
        }
        agent = null;
        store = null;
        current = null;
    }
}
