package io.ferry.cli;

import io.ferry.eventlog.KafkaLog;
import io.ferry.model.Command;
import io.ferry.model.Names;
import io.ferry.model.Placement;
import picocli.CommandLine;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

import java.util.concurrent.Callable;

/**
 * {@code ferry chaos}: failures on purpose, for users to test their own setups. Both go as
 * commands through the log: kill-rank to the coordinator, which passes it to the node that
 * runs the rank; kill-node to that node's agent, wherever it runs.
 */
@CommandLine.Command(name = "chaos", mixinStandardHelpOptions = true,
        description = "Break things on purpose to test a setup: kill one rank, or lose a whole node.",
        subcommands = {ChaosCommand.KillRank.class, ChaosCommand.KillNode.class})
final class ChaosCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(new CommandLine(this), "give kill-rank JOB RANK or kill-node NODE");
    }

    /** SIGKILL one rank, as a crash would: the job's own recovery (or failure) follows. */
    @CommandLine.Command(name = "kill-rank", mixinStandardHelpOptions = true,
            description = "SIGKILL rank RANK of JOB on whatever node runs it (the coordinator knows which).")
    static final class KillRank implements Callable<Integer> {
        @Parameters(index = "0", paramLabel = "JOB")
        String job;
        @Parameters(index = "1", paramLabel = "RANK")
        int rank;
        @Mixin
        LogOptions logOptions;
        @Mixin
        Report report;

        @Override
        public Integer call() throws Exception {
            Names.requireJob(job);
            if (rank < 0) {
                throw new IllegalArgumentException("RANK must be >= 0, got " + rank);
            }
            try (LogConnection c = logOptions.open()) {
                c.log.send(KafkaLog.COORDINATOR, new Command.KillRank(job, rank));
            }
            report.print(System.out, "ferry chaos: asked the coordinator to have rank " + rank + " of " + job
                    + " SIGKILLed on the node that runs it", "job", job, "rank", rank, "requested", "kill-rank");
            return 0;
        }
    }

    /** Lose a node: its agent and every rank on it killed, its cache removed. */
    @CommandLine.Command(name = "kill-node", mixinStandardHelpOptions = true,
            description = {"Lose NODE as a power cut would: its `ferry agent` and every rank there are killed and its",
                    "cache directory removed. Jobs with --auto-recover restart its ranks elsewhere."})
    static final class KillNode implements Callable<Integer> {
        @Parameters(index = "0", paramLabel = "NODE")
        String node;
        @Mixin
        LogOptions logOptions;
        @Mixin
        Report report;

        @Override
        public Integer call() throws Exception {
            Placement.requireNode(node);
            try (LogConnection c = logOptions.open()) {
                c.log.send(node, new Command.KillNode(node));
            }
            report.print(System.out, "ferry chaos: asked node " + node + " to die (agent, ranks, cache)",
                    "node", node, "requested", "kill-node");
            return 0;
        }
    }
}
