package io.ferry.cli;

import io.ferry.eventlog.KafkaLog;
import io.ferry.model.Command;
import io.ferry.model.Names;
import picocli.CommandLine;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.concurrent.Callable;

/** {@code ferry checkpoint J}: ask the coordinator for a checkpoint of a running job now. */
@CommandLine.Command(name = "checkpoint", mixinStandardHelpOptions = true,
        description = "Request a checkpoint of a running job now (queued if one is being captured).")
final class CheckpointCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "JOB")
    String job;
    @CommandLine.Mixin
    LogOptions logOptions;
    @CommandLine.Mixin
    Report report;

    @Override
    public Integer call() throws Exception {
        Names.requireJob(job);
        FerryHome h = logOptions.home();
        if (logOptions.kafka == null && h.activeRun().isEmpty()) {
            throw new IllegalStateException("no job runs from " + h.dir()
                    + " (start one with ferry run, or give --kafka)");
        }
        try (LogConnection c = LogConnection.open(h, logOptions.kafka)) {
            c.log.send(KafkaLog.COORDINATOR, new Command.RequestCheckpoint(job));
        }
        report.print(System.out, "checkpoint of " + job + " requested", "job", job, "requested", true);
        return 0;
    }
}
