package io.ferry.agent;

import io.ferry.eventlog.KafkaLog;
import io.ferry.model.Command;
import io.ferry.model.EventCodec;
import io.ferry.model.Placement;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;

import java.io.Closeable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
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
    private final KafkaLog log;
    private final String node;
    private final Path home;
    private final Map<String, JobOnNode> jobs = new ConcurrentHashMap<>();
    private final Map<String, ExecutorService> lanes = new ConcurrentHashMap<>();
    private final AtomicLong failedCommands = new AtomicLong();
    private final Thread thread;
    private final KafkaConsumer<byte[], byte[]> commands;
    private volatile boolean running = true;

    private final Duration heartbeat;

    private final Map<String, String> secrets;

    public AgentService(KafkaLog log, String node, Path home) {
        this(log, node, home, NodeAgent.HEARTBEAT_INTERVAL, Map.of());
    }

    /**
     * @param home      the node's directory: its cache is {@code home/cache}
     * @param heartbeat how often each job's heartbeat is sent: a fraction of the coordinator's timeout
     * @param secrets   store credentials known to this process (they never travel in the log), added to
     *                  every job's settings; empty: the store's own chain (environment, profile)
     */
    public AgentService(KafkaLog log, String node, Path home, Duration heartbeat, Map<String, String> secrets) {
        this.log = log;
        this.secrets = Map.copyOf(secrets);
        this.heartbeat = heartbeat;
        this.node = Placement.requireNode(node);
        this.home = home;
        // Positioned before start() returns: a command sent after that is never missed.
        this.commands = log.commandsFor(node);
        this.thread = new Thread(this::run, "ferry-agent-" + node);
        this.thread.setDaemon(true);
    }

    public AgentService start() {
        thread.start();
        return this;
    }

    public String node() {
        return node;
    }

    /** The job's agent on this node, while this node runs ranks of it. */
    public Optional<NodeAgent> agent(String job) {
        return Optional.ofNullable(jobs.get(job)).flatMap(JobOnNode::agent);
    }

    /** Commands that failed on this node since it started (each was reported). */
    public long failedCommands() {
        return failedCommands.get();
    }

    private void run() {
        try {
            while (running) {
                for (ConsumerRecord<byte[], byte[]> r : commands.poll(Duration.ofMillis(100))) {
                    if (node.equals(new String(r.key(), StandardCharsets.UTF_8))) {
                        dispatch(r);
                    }
                }
            }
        } catch (org.apache.kafka.common.errors.InterruptException | org.apache.kafka.common.errors.WakeupException e) {
            // closing
        } finally {
            commands.close();
        }
    }

    private void dispatch(ConsumerRecord<byte[], byte[]> r) {
        Command c;
        try {
            c = EventCodec.decodeCommand(r.value());
        } catch (IllegalArgumentException bad) {
            failedCommands.incrementAndGet();
            System.err.println("ferry agent " + node + ": ignoring malformed command at offset " + r.offset() + ": "
                    + bad.getMessage());
            return;
        }
        lanes.computeIfAbsent(c.job(), j -> Executors.newSingleThreadExecutor(runnable -> {
            Thread t = new Thread(runnable, "ferry-agent-job-" + j);
            t.setDaemon(true);
            return t;
        })).execute(() -> handle(c));
    }

    private void handle(Command c) {
        try {
            if (c instanceof Command.Launch l) {
                JobOnNode j = jobs.computeIfAbsent(l.job(), job -> new JobOnNode(log, node, home, heartbeat, secrets));
                j.launch(l);
                if (l.rankSet().isEmpty()) {
                    jobs.remove(l.job(), j);
                }
            } else if (c instanceof Command.Capture cap) {
                JobOnNode j = jobs.get(cap.job());
                if (j != null) {
                    j.capture(cap.generation());
                }
            } else if (c instanceof Command.Release rel) {
                JobOnNode j = jobs.remove(rel.job());
                if (j != null) {
                    j.release();
                }
            } else if (c instanceof Command.Restart || c instanceof Command.RequestCheckpoint) {
                // the coordinator's commands, on a partition this node shares
            } else {
                throw new AssertionError(c);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            failedCommands.incrementAndGet();
            if (c instanceof Command.Launch l) { // tell the job, not only this node's log: its submitter is waiting
                try {
                    log.append(new io.ferry.model.Event.RestoreFailed(l.job(), l.generation(), node,
                            "cannot launch: " + e.getMessage()));
                } catch (RuntimeException unreported) {
                    // the log is away too; the coordinator's heartbeat check will notice
                }
            }
            System.err.println("ferry agent " + node + ": " + c.getClass().getSimpleName() + " of job " + c.job()
                    + " failed: " + e.getMessage());
        }
    }

    @Override
    public void close() {
        running = false;
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
    }
}
