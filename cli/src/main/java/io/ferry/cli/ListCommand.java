package io.ferry.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ferry.coordinator.GenerationView;
import io.ferry.coordinator.JobView;
import io.ferry.coordinator.http.JobJson;
import io.ferry.model.Names;
import io.ferry.model.Sizes;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.Callable;

/** {@code ferry list J}: the generations of a job, as the event log tells them. */
@Command(name = "list", mixinStandardHelpOptions = true,
        description = "List a job's generations: state, bytes, stall, time to established.")
final class ListCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "JOB")
    String job;
    @CommandLine.Mixin
    LogOptions logOptions;
    @CommandLine.Option(names = "--json",
            description = "Print JSON: the job and every generation (as /api/jobs/JOB has them).")
    boolean json;

    @Override
    public Integer call() throws Exception {
        Names.requireJob(job);
        try (LogConnection c = logOptions.open()) {
            JobView v = c.replay().get(job)
                    .orElseThrow(() -> new IllegalArgumentException("no job " + job + " in the log"));
            if (json) {
                ObjectNode n = JobJson.summary(v,
                        Double.NaN, System.currentTimeMillis());
                n.set("generations", JobJson.generations(v));
                System.out.println(new ObjectMapper().writerWithDefaultPrettyPrinter()
                        .writeValueAsString(n));
            } else {
                print(v, System.out);
            }
        }
        return 0;
    }

    static void print(JobView v, PrintStream out) {
        out.printf(Locale.ROOT, "%-10s %-12s %-9s %-7s %11s %11s %9s %12s  %s%n", "GENERATION", "STATE", "CAPTURED",
                "STAGED", "RAW", "STORED", "STALL s", "ESTABLISH s", "NOTE");
        for (GenerationView g : v.generations()) {
            out.printf(Locale.ROOT, "%-10d %-12s %4d/%-4d %3d/%-3d %11s %11s %9.3f %12s  %s%n", g.generation(),
                    g.state(), g.capturedRanks(), v.ranks(), g.stagedRanks(), v.ranks(), Sizes.format(g.rawBytes()),
                    Sizes.format(g.storedBytes()), g.maxStallSeconds(),
                    Double.isNaN(g.secondsToEstablished()) ? "-"
                            : String.format(Locale.ROOT, "%.2f", g.secondsToEstablished()), g.problem());
        }
        out.printf(Locale.ROOT, "job %s: %d ranks, %s, %d recoveries, newest established: %s%n", v.job(), v.ranks(),
                v.finished() ? (v.success().orElse(false) ? "finished OK" : "FAILED") : "running", v.recoveries(),
                v.newestEstablished().map(g -> Long.toString(g.generation())).orElse("none"));
    }
}
