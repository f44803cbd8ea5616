package io.ferry.agent;

import io.ferry.eventlog.KafkaLog;
import io.ferry.model.Command;
import io.ferry.model.Event;
import io.ferry.model.ImageRef;
import io.ferry.model.LaunchSpec;
import io.ferry.staging.LocalCache;
import io.ferry.staging.OpenedStore;
import io.ferry.staging.Staging;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * One job's life on one node, driven by its commands: a {@link Command.Launch} (re)starts
 * the node's ranks, from verified images when it names a generation; captures go to the
 * job's {@link NodeAgent}; a release lets staging finish and lets go. Not thread-safe: the
 * {@link AgentService} runs one job's commands on one thread.
 */
final class JobOnNode {
    private final KafkaLog log;
    private final String node;
    private final LocalCache cache;
    private final Duration heartbeat;
    private final Map<String, String> secrets;
    private Command.Launch current;
    private NodeAgent agent;
    private OpenedStore store;

    JobOnNode(KafkaLog log, String node, Path home, Duration heartbeat, Map<String, String> secrets) {
        this.log = log;
        this.secrets = secrets;
        this.heartbeat = heartbeat;
        this.node = node;
        this.cache = Staging.localCache(home.resolve("cache"));
    }

    Optional<NodeAgent> agent() {
        return Optional.ofNullable(agent);
    }

    /** Stops whatever runs, restores {@code l.generation()} verified (if >= 0), reports, launches. */
    void launch(Command.Launch l) throws IOException, InterruptedException {
        if (agent != null) {
            agent.stopRanks();
        }
        if (l.rankSet().isEmpty()) {
            close();
            return;
        }
        if (current == null || !current.store().equals(l.store()) || !current.launch().equals(l.launch())) {
            close();
            Map<String, String> settings = new HashMap<>(l.launch().settings());
            settings.putAll(secrets);
            store = OpenedStore.open(l.store(), settings);
        } else if (agent != null && !current.ranks().equals(l.ranks())) {
            agent.close();
            agent = null;
        }
        current = l;
        if (agent == null) {
            LaunchSpec s = l.launch();
            agent = new NodeAgent(new AgentConfig(l.job(), l.rankSet(), l.nranks(), node, s.program(),
                    new Quiesce(s.capture(), Duration.ofMillis(s.captureTimeoutMillis()), s.signal()),
                    Path.of(System.getProperty("java.io.tmpdir"))), cache, store.pipeline(), log::append, heartbeat);
        }
        Map<Integer, Path> dirs = new HashMap<>();
        if (l.generation() >= 0) {
            Map<Integer, String> sources = new HashMap<>();
            try {
                restore(l, dirs, sources);
            } catch (IOException e) {
                log.append(new Event.RestoreFailed(l.job(), l.generation(), node, e.getMessage()));
                return; // the coordinator picks an older generation and sends another launch
            }
            log.append(new Event.ImagesRestored(l.job(), l.generation(), node, sources));
        } else if (!"start".equals(l.cause())) {
            log.append(new Event.ImagesRestored(l.job(), -1, node, Map.of()));
        }
        agent.launch(l.generation(), dirs);
    }

    /** Materialises every rank of this node from the nearest tier that verifies, after checking the commit marker. */
    private void restore(Command.Launch l, Map<Integer, Path> dirs, Map<Integer, String> sources) throws IOException {
        Optional<String> refused = agent.cannotRestore();
        if (refused.isPresent()) {
            throw new IOException(refused.get());
        }
        // Checked here, by the node, not taken on the coordinator's word: an image is never
        // restored from a generation whose snapshot was not committed.
        if (!store.pipeline().repository().isEstablished(l.job(), l.generation())) {
            throw new IOException("generation " + l.generation() + " of " + l.job() + " has no commit marker on "
                    + l.store());
        }
        for (int r : l.rankSet().toList()) {
            Path dir = cache.root().resolve(l.job()).resolve(".restart").resolve(Integer.toString(r));
            sources.put(r, RestartSource.materialise(store.pipeline(), cache, new ImageRef(l.job(), l.generation(), r), dir));
            dirs.put(r, dir);
        }
    }

    void capture(long generation) {
        if (agent != null) {
            agent.checkpoint(generation);
        }
    }

    /** The job is over: let queued staging finish (bounded), then stop everything of it here. */
    void release() throws InterruptedException {
        if (agent != null) {
            try {
                agent.stagingIdle().get(60, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                System.err.println("ferry agent " + node + ": staging of " + current.job()
                        + " did not finish within 60 s; its images stay in the cache");
            }
        }
        close();
    }

    void close() {
        try {
            if (agent != null) {
                agent.close();
            }
            if (store != null) {
                store.close();
            }
        } catch (IOException e) {
            System.err.println("ferry agent " + node + ": closing a job: " + e.getMessage());
        }
        agent = null;
        store = null;
        current = null;
    }
}
