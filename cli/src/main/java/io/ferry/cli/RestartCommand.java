package io.ferry.cli;

import io.ferry.agent.RestartSource;
import io.ferry.agent.capture.ProcCapturer;
import io.ferry.coordinator.GenerationView;
import io.ferry.coordinator.JobView;
import io.ferry.model.Command;
import io.ferry.model.ImageRef;
import io.ferry.staging.LocalCache;
import io.ferry.staging.Staging;
import picocli.CommandLine;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code ferry restart J [--generation G] [--dry-run]}: roll a running job back, or show the plan. */
@CommandLine.Command(name = "restart", mixinStandardHelpOptions = true,
        description = "Roll every rank of a running job back to a generation (default: newest established); --dry-run prints the plan.")
final class RestartCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "JOB")
    String job;
    @Option(names = "--generation", paramLabel = "G")
    Long generation;
    @Option(names = "--dry-run", description = "Print the plan (generation and source tier per rank) and change nothing.")
    boolean dryRun;
    @picocli.CommandLine.Mixin
    LogOptions logOptions;
    @Option(names = "--set", paramLabel = "KEY=VALUE")
    Map<String, String> settings = new LinkedHashMap<>();

    @Override
    public Integer call() throws Exception {
        io.ferry.model.Names.requireJob(job);
        FerryHome h = logOptions.home();
        try (LogConnection c = LogConnection.open(h, logOptions.kafka)) {
            JobView v = c.replay().get(job).orElseThrow(() -> new IllegalArgumentException("no job " + job + " in the log"));
            long g = generation != null ? generation : v.newestEstablished().map(GenerationView::generation)
                    .orElseThrow(() -> new IllegalStateException("job " + job + " has no established snapshot"));
            String store = v.settings().orElseThrow().store();
            try (io.ferry.staging.OpenedStore o = StoreOptions.open(store, settings)) {
                if (!o.pipeline().repository().isEstablished(job, g)) {
                    throw new IllegalStateException("generation " + g + " of " + job + " is not established on " + store);
                }
                boolean proc = o.pipeline().repository().readManifest(new ImageRef(job, g, 0)).manifest().entries().stream()
                        .anyMatch(e -> e.path().equals(ProcCapturer.DESCRIPTION));
                if (proc) {
                    throw new IllegalStateException("generation " + g + " of " + job + " holds proc images (ELF core files):"
                            + " Ferry cannot restore them, that needs an external restorer; fetch one for gdb with"
                            + " `ferry image pull --store " + store + " --job " + job + " --generation " + g + " --rank 0 DIR`");
                }
                LocalCache cache = Staging.localCache(h.cache());
                System.out.println("restart plan for " + job + ": generation " + g);
                for (int r = 0; r < v.ranks(); r++) {
                    System.out.printf("  rank %d: %s%n", r, RestartSource.plan(o.pipeline(), cache, new ImageRef(job, g, r)));
                }
            }
            if (dryRun) {
                return 0;
            }
            if (logOptions.kafka == null && h.activeRun().isEmpty()) {
                throw new IllegalStateException("job " + job + " is not running from " + h.dir());
            }
            c.log.send(io.ferry.eventlog.KafkaLog.COORDINATOR, new Command.Restart(job, g, "requested by ferry restart"));
            System.out.println("restart of " + job + " from generation " + g + " requested");
        }
        return 0;
    }
}
