package io.ferry.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ferry.coordinator.GenerationView;
import io.ferry.coordinator.JobView;
import io.ferry.coordinator.Jobs;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/** {@code ferry status [J] [--json]}: jobs, their newest snapshots and what is wrong. */
@Command(name = "status", mixinStandardHelpOptions = true, description = "Show jobs: state, newest established snapshot, problems.")
final class StatusCommand implements Callable<Integer> {
    @Parameters(index = "0", arity = "0..1", paramLabel = "JOB")
    String job;
    @Option(names = "--json", description = "Print JSON.")
    boolean json;
    @picocli.CommandLine.Mixin
    LogOptions logOptions;

    @Override
    public Integer call() throws Exception {
        if (job != null) {
            io.ferry.model.Names.requireJob(job);
        }
        List<JobView> views;
        try (LogConnection c = logOptions.open()) {
            Jobs jobs = c.replay();
            views = job == null ? List.copyOf(jobs.all()) : jobs.get(job).map(List::of)
                    .orElseThrow(() -> new IllegalArgumentException("no job " + job + " in the log"));
        }
        if (json) {
            ObjectMapper m = new ObjectMapper();
            ArrayNode arr = m.createArrayNode();
            for (JobView v : views) {
                ObjectNode n = arr.addObject().put("job", v.job()).put("ranks", v.ranks())
                        .put("state", state(v)).put("recoveries", v.recoveries());
                v.newestEstablished().ifPresent(g -> n.put("newestEstablished", g.generation()));
                v.latest().ifPresent(g -> n.put("latestGeneration", g.generation()).put("latestState", g.state().toString())
                        .put("problem", g.problem()));
            }
            System.out.println(m.writerWithDefaultPrettyPrinter().writeValueAsString(job == null ? arr : arr.get(0)));
        } else {
            for (JobView v : views) {
                System.out.printf(Locale.ROOT, "%s: %s, %d ranks, newest established generation %s, latest %s%s%n", v.job(),
                        state(v), v.ranks(), v.newestEstablished().map(g -> Long.toString(g.generation())).orElse("none"),
                        v.latest().map(g -> g.generation() + " " + g.state()).orElse("none"),
                        v.latest().map(GenerationView::problem).filter(p -> !p.isEmpty()).map(p -> " (" + p + ")").orElse(""));
            }
        }
        return 0;
    }

    private static String state(JobView v) {
        return v.finished() ? (v.success().orElse(false) ? "finished" : "failed") : "running";
    }
}
