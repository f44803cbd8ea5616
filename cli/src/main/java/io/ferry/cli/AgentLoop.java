package io.ferry.cli;

import io.ferry.agent.NodeAgent;
import io.ferry.agent.RestartSource;
import io.ferry.coordinator.KafkaLog;
import io.ferry.model.Command;
import io.ferry.model.Event;
import io.ferry.model.EventCodec;
import io.ferry.model.ImageRef;
import io.ferry.staging.LocalCache;
import io.ferry.staging.StagingPipeline;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;

import java.io.Closeable;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * Carries out the commands addressed to this node on the commands topic: captures (handed to
 * the agent, which answers with events) and restarts (stop every rank, materialise each
 * image from the nearest tier that verifies, relaunch). When no tier holds a valid copy of
 * the chosen generation, the previous established one is used.
 */
final class AgentLoop implements Closeable {
    private final KafkaLog log;
    private final String node;
    private final NodeAgent agent;
    private final StagingPipeline pipeline;
    private final LocalCache cache;
    private final KafkaConsumer<byte[], byte[]> commands;
    private final Thread thread;
    private volatile boolean running = true;

    AgentLoop(KafkaLog log, String node, NodeAgent agent, StagingPipeline pipeline, LocalCache cache) {
        this.log = log;
        this.node = node;
        this.agent = agent;
        this.pipeline = pipeline;
        this.cache = cache;
        this.commands = log.reader(KafkaLog.COMMANDS, false);
        this.thread = new Thread(this::run, "ferry-agent-commands");
        this.thread.setDaemon(true);
    }

    AgentLoop start() {
        thread.start();
        return this;
    }

    private void run() {
        try {
            while (running) {
                for (ConsumerRecord<byte[], byte[]> r : commands.poll(Duration.ofMillis(100))) {
                    if (!node.equals(new String(r.key(), StandardCharsets.UTF_8))) {
                        continue;
                    }
                    Command c;
                    try {
                        c = EventCodec.decodeCommand(r.value());
                    } catch (IllegalArgumentException bad) {
                        System.err.println("ferry agent: ignoring malformed command: " + bad.getMessage());
                        continue;
                    }
                    if (!c.job().equals(agent.config().job())) {
                        continue;
                    }
                    if (c instanceof Command.Capture cap) {
                        agent.checkpoint(cap.generation());
                    } else if (c instanceof Command.Restart rs) {
                        restart(rs);
                    }
                }
            }
        } catch (org.apache.kafka.common.errors.InterruptException | org.apache.kafka.common.errors.WakeupException e) {
            // closing
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException | RuntimeException e) {
            System.err.println("ferry agent: command loop stopped: " + e);
        } finally {
            commands.close();
        }
    }

    private void restart(Command.Restart rs) throws IOException, InterruptedException {
        if (agent.cannotRestore().isPresent()) {
            System.err.println("ferry agent: restart refused: " + agent.cannotRestore().get());
            return;
        }
        agent.stopRanks();
        String job = agent.config().job();
        long g = rs.generation();
        Map<Integer, Path> dirs = new HashMap<>();
        Map<Integer, String> sources = new HashMap<>();
        while (g >= 0) {
            try {
                for (int r = 0; r < agent.config().ranks(); r++) {
                    Path dir = cache.root().resolve(job).resolve(".restart").resolve(Integer.toString(r));
                    sources.put(r, RestartSource.materialise(pipeline, cache, new ImageRef(job, g, r), dir));
                    dirs.put(r, dir);
                }
                break;
            } catch (IOException e) {
                System.err.println("ferry agent: generation " + g + " of " + job + " is unusable (" + e.getMessage()
                        + "); trying the previous established one");
                dirs.clear();
                sources.clear();
                g = previousEstablished(job, g);
            }
        }
        log.append(new Event.RecoveryStarted(job, g, sources, rs.cause()));
        agent.launch(g, dirs);
    }

    private long previousEstablished(String job, long below) throws IOException {
        for (long g = below - 1; g >= 0; g--) {
            if (pipeline.repository().isEstablished(job, g)) {
                return g;
            }
        }
        return -1;
    }

    @Override
    public void close() {
        running = false;
        try {
            thread.join(3000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
