package io.ferry.cli;

import io.ferry.agent.AgentService;
import io.ferry.eventlog.KafkaLog;
import io.ferry.model.Placement;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/** {@code ferry agent}: one node's agent, serving every job with ranks on the node until stopped. */
@Command(name = "agent", mixinStandardHelpOptions = true,
        description = "Run this node's agent: launches, checkpoints, stages and restores the ranks placed here.")
final class AgentCommand implements Callable<Integer> {
    @Option(names = "--kafka", required = true, paramLabel = "HOST:PORT", description = "The coordinator's Kafka log.")
    String kafka;
    @Option(names = "--node", paramLabel = "NAME", description = "This node's name in placements (default: the host name).")
    String node;
    @Option(names = "--home", paramLabel = "DIR", description = "The node's directory: its cache is DIR/cache (default: $FERRY_HOME or ~/.ferry).")
    Path home;

    @Option(names = "--heartbeat", defaultValue = "5s", paramLabel = "DURATION",
            description = {"How often the agent tells the coordinator it is alive; keep it a third of the coordinator's",
                    "--heartbeat-timeout or less. Default ${DEFAULT-VALUE}."})
    String heartbeat;

    @Override
    public Integer call() throws Exception {
        String name = Placement.requireNode(node != null ? node : JobRunner.nodeName());
        FerryHome h = FerryHome.resolve(home);
        java.time.Duration every = io.ferry.model.Durations.parse(heartbeat);
        if (every.isZero()) {
            throw new IllegalArgumentException("--heartbeat must be positive");
        }
        java.nio.file.Files.createDirectories(h.dir());
        CountDownLatch stop = new CountDownLatch(1);
        KafkaLog log = new KafkaLog(kafka);
        // Credentials: the environment. Ranks a launcher starts on this host find this agent by its host name.
        AgentService agent = new AgentService(log, name, h.dir(), every, java.util.Map.of(), true).start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            agent.close();
            log.close();
            stop.countDown();
        }, "ferry-agent-stop"));
        System.out.println("ferry agent " + name + ": serving commands from " + kafka + ", cache " + h.cache()
                + agent.rankLink().map(l -> ", ranks of launchers register via " + l).orElse(""));
        System.out.flush();
        stop.await();
        return 0;
    }
}
