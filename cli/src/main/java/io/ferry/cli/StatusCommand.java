package io.ferry.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.ferry.coordinator.GenerationView;
import io.ferry.coordinator.JobView;
import io.ferry.coordinator.Jobs;
import io.ferry.coordinator.http.JobJson;
import io.ferry.coordinator.predict.JobForecast;
import io.ferry.model.Durations;
import io.ferry.model.Event;
import io.ferry.model.Names;
import io.ferry.model.Sizes;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/** {@code ferry status [J] [--json]}: jobs, their newest snapshots and what is wrong. */
@Command(name = "status", mixinStandardHelpOptions = true,
        description = "Show jobs: state, newest established snapshot, problems.")
final class StatusCommand implements Callable<Integer> {
    @Parameters(index = "0", arity = "0..1", paramLabel = "JOB")
    String job;
    @Option(names = "--json", description = "Print JSON.")
    boolean json;
    @Option(names = "--mtbf", paramLabel = "DURATION",
            description = "Mean time between failures (e.g. 24h) for the Young/Daly checkpoint interval; default:"
                    + " measured from the job's own recoveries.")
    String mtbf;
    @CommandLine.Mixin
    LogOptions logOptions;

    @Override
    public Integer call() throws Exception {
        if (job != null) {
            Names.requireJob(job);
        }
        if (mtbf != null && !(mtbfSeconds() > 0)) {
            throw new IllegalArgumentException("--mtbf must be above zero, got '" + mtbf + "'");
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
            long now = System.currentTimeMillis();
            for (JobView v : views) {
                arr.add(JobJson.summary(v, mtbfSeconds(), now));
            }
            System.out.println(m.writerWithDefaultPrettyPrinter().writeValueAsString(job == null ? arr : arr.get(0)));
        } else {
            for (JobView v : views) {
                System.out.printf(Locale.ROOT, "%s: %s, %d ranks, newest established generation %s, latest %s%s%n",
                        v.job(),
                        JobJson.state(v), v.ranks(),
                        v.newestEstablished().map(g -> Long.toString(g.generation())).orElse("none"),
                        v.latest().map(g -> g.generation() + " " + g.state()).orElse("none"),
                        v.latest().map(GenerationView::problem).filter(p -> !p.isEmpty()).map(p -> " (" + p + ")")
                                .orElse(""));
                v.stragglersLine(5).ifPresent(l -> System.out.println("  " + l));
                v.newestEstablished().filter(g -> g.partnerRanks() > 0).ifPresent(g -> System.out.printf(Locale.ROOT,
                        "  generation %d: partner copies of %d of %d ranks (%s) in other nodes' caches%n",
                        g.generation(), g.partnerRanks(), v.ranks(), Sizes.format(g.partnerBytes())));
                for (Event.StoreHealthReported h : v.storeHealth()) {
                    System.out.println("  " + describe(h));
                }
                JobForecast.of(v, mtbfSeconds(), System.currentTimeMillis()).lines()
                        .forEach(l -> System.out.println("  " + l));
            }
        }
        return 0;
    }

    /** One line about a node's remote store, e.g. when it is down and images wait in the cache. */
    static String describe(Event.StoreHealthReported h) {
        String what = switch (h.circuit()) {
            case "OPEN" -> "is considered DOWN: images wait in the local cache and staging resumes when it is back";
            case "HALF_OPEN" -> "is being probed after an outage";
            default -> "is up";
        };
        return String.format(Locale.ROOT, "store %s (node %s) %s; %d calls, %d retries, %d failed, %d rejected",
                h.store(), h.node(), what, h.calls(), h.retries(), h.failed(), h.rejected());
    }

    private double mtbfSeconds() {
        return mtbf == null ? Double.NaN : Durations.parse(mtbf).toMillis() / 1000.0;
    }
}
