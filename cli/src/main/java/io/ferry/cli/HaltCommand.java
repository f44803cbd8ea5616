package io.ferry.cli;

import io.ferry.eventlog.KafkaLog;
import io.ferry.model.Command;
import io.ferry.model.Durations;
import io.ferry.model.Names;
import picocli.CommandLine;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeParseException;
import java.util.concurrent.Callable;

/** {@code ferry halt J}: a final checkpoint established before a deadline, then the job stops (SCR's scr_halt). */
@CommandLine.Command(name = "halt", mixinStandardHelpOptions = true,
        description = {"Halt a running job before a deadline: its next checkpoint, requested as late as the job's own",
                "forecast allows, is established before the deadline, then the job stops. Run"
                        + " the same `ferry run` again",
                "to resume from that checkpoint. SIGTERM to `ferry run` does the same (see --halt-grace)."})
final class HaltCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "JOB")
    String job;
    @Option(names = "--seconds", paramLabel = "DURATION", description = "The deadline from now: 90s, 10m (default 5m).")
    String seconds;
    @Option(names = "--before", paramLabel = "TIME",
            description = "The deadline as a time: 2026-11-23T18:00:00Z, or local 2026-11-23T18:00"
                    + " (e.g. the allocation's end).")
    String before;
    @CommandLine.Mixin
    LogOptions logOptions;
    @CommandLine.Mixin
    Report report;

    @Override
    public Integer call() throws Exception {
        Names.requireJob(job);
        Instant deadline = deadline(seconds, before, Instant.now());
        FerryHome h = logOptions.home();
        if (logOptions.kafka == null && h.activeRun().isEmpty()) {
            throw new IllegalStateException("no job runs from " + h.dir()
                    + " (give --kafka for a job of a running coordinator)");
        }
        try (LogConnection c = LogConnection.open(h, logOptions.kafka)) {
            c.log.send(KafkaLog.COORDINATOR, new Command.Halt(job, deadline.toEpochMilli(), "ferry halt"));
        }
        report.print(System.out, "halt of " + job + " requested: a final checkpoint established before " + deadline
                + ", then the job stops", "job", job, "deadline", deadline.toString(), "deadlineMillis",
                deadline.toEpochMilli());
        return 0;
    }

    /** The deadline from {@code --seconds} or {@code --before} (one of them; neither: 5 minutes from now). */
    static Instant deadline(String seconds, String before, Instant now) {
        if (seconds != null && before != null) {
            throw new IllegalArgumentException("give --seconds or --before, not both");
        }
        if (before != null) {
            Instant at;
            try {
                at = Instant.parse(before);
            } catch (DateTimeParseException utc) {
                try {
                    at = LocalDateTime.parse(before).atZone(ZoneId.systemDefault()).toInstant();
                } catch (DateTimeParseException local) {
                    throw new IllegalArgumentException(
                            "--before: not a time like 2026-11-23T18:00:00Z or 2026-11-23T18:00: '" + before + "'");
                }
            }
            if (!at.isAfter(now)) {
                throw new IllegalArgumentException("--before " + before + " is already past");
            }
            return at;
        }
        Duration d = Durations.parse(seconds != null ? seconds : "5m");
        if (d.isZero() || d.isNegative()) {
            throw new IllegalArgumentException("--seconds must be positive, got " + seconds);
        }
        return now.plus(d);
    }
}
