package io.ferry.cli;

import io.ferry.agent.RestartSource;
import io.ferry.agent.capture.ProcCapturer;
import io.ferry.agent.peer.PeerAuth;
import io.ferry.coordinator.GenerationView;
import io.ferry.coordinator.JobView;
import io.ferry.coordinator.PeerHints;
import io.ferry.eventlog.KafkaLog;
import io.ferry.eventlog.LogReplay;
import io.ferry.model.Command;
import io.ferry.model.Durations;
import io.ferry.model.Event;
import io.ferry.model.ImageRef;
import io.ferry.model.LaunchSpec;
import io.ferry.model.Names;
import io.ferry.model.Placement;
import io.ferry.staging.CommittedDigests;
import io.ferry.staging.LocalCache;
import io.ferry.staging.OpenedStore;
import io.ferry.staging.Progress;
import io.ferry.staging.Staging;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import picocli.CommandLine;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.Callable;

/** {@code ferry restart J [--generation G] [--dry-run]}: roll a running job back, or show the plan. */
@CommandLine.Command(name = "restart", mixinStandardHelpOptions = true,
        description = {
                "Roll every rank of a running job back to a generation (default: newest established) and follow it",
                "until every rank runs again (a progress bar on a terminal); --dry-run prints the plan."})
final class RestartCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "JOB")
    String job;
    @Option(names = "--generation", paramLabel = "G")
    Long generation;
    @Option(names = "--dry-run", description = {"Print the plan (generation, node and source tier per rank) and change",
            "nothing: each node's agent checks its own cache against the committed manifests."})
    boolean dryRun;
    @Option(names = "--json", description = {
            "With --dry-run: the plan as JSON, [{\"rank\":..,\"node\":..,\"generation\":..,\"source\":..}].",
            "Else: the outcome as one JSON object (ranks restored, by source, seconds, failed nodes)."})
    boolean json;
    @Option(names = "--no-wait", description = "Return once the restart is requested, without following it.")
    boolean noWait;
    @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "10m",
            description =
                    "How long to follow the rollback before giving up waiting (default 10m; the rollback goes on).")
    String timeout;
    /** How long a dry run waits for every node's answer. */
    static final Duration PLAN_PATIENCE = Duration.ofSeconds(15);
    @CommandLine.Mixin
    LogOptions logOptions;
    @Option(names = "--set", paramLabel = "KEY=VALUE")
    Map<String, String> settings = new LinkedHashMap<>();

    @Override
    public Integer call() throws Exception {
        Names.requireJob(job);
        FerryHome h = logOptions.home();
        try (LogConnection c = LogConnection.open(h, logOptions.kafka)) {
            JobView v = c.replay().get(job)
                    .orElseThrow(() -> new IllegalArgumentException("no job " + job + " in the log"));
            long g = generation != null ? generation : v.newestEstablished().map(GenerationView::generation)
                    .orElseThrow(() -> new IllegalStateException("job " + job + " has no established snapshot"));
            String store = v.settings().orElseThrow().store();
            try (OpenedStore o = StoreOptions.open(store, settings)) {
                if (!o.pipeline().repository().isEstablished(job, g)) {
                    throw new IllegalStateException("generation " + g + " of " + job + " is not established on "
                            + store);
                }
                boolean proc = o.pipeline().repository().readManifest(new ImageRef(job, g, 0)).manifest().entries()
                        .stream().anyMatch(e -> e.path().equals(ProcCapturer.DESCRIPTION));
                if (proc) {
                    throw new IllegalStateException("generation " + g + " of " + job
                            + " holds proc images (ELF core files):"
                            + " Ferry cannot restore them, that needs an external restorer; fetch one for gdb with"
                            + " `ferry image pull --store " + store + " --job " + job + " --generation " + g
                            + " --rank 0 DIR`");
                }
                boolean running = logOptions.kafka != null || h.activeRun().isPresent();
                // Agents keep a job's cache after it ended: they are asked while the system runs.
                Optional<Placement> where = v.placement()
                        .filter(Placement::complete);
                // a user's login may not ask agents (their answer opens the store the question names): planned here
                List<PlannedRank> plan = running && where.isPresent() && c.log.requester() == null
                        ? askNodes(c, v, where.get(), g, store)
                        : planHere(o, h, v.ranks(), g);
                if (dryRun || !json) {
                    print(plan, g);
                }
            }
            if (dryRun) {
                return 0;
            }
            if (logOptions.kafka == null && h.activeRun().isEmpty()) {
                throw new IllegalStateException("job " + job + " is not running from " + h.dir());
            }
            Duration patience = Durations.parse(timeout);
            Runnable send = () -> c.log.send(KafkaLog.COORDINATOR,
                    new Command.Restart(job, g, "requested by ferry restart"));
            if (noWait) {
                send.run();
                System.out.println("restart of " + job + " from generation " + g + " requested");
                return 0;
            }
            RestartWatch.Outcome o = RestartWatch.follow(c.log, job, g, v.ranks(), patience,
                    json ? Progress.NONE : TerminalProgress.forStderr(), System.err, send);
            System.out.println(json ? o.json() : o.line());
            return o.complete() ? 0 : 1;
        }
    }

    /** One rank of the plan: where it would restart from. */
    record PlannedRank(int rank, String node, long generation, String source) {}

    /**
     * The job runs: each node of its placement plans its own ranks against its own cache (agents answer in the log).
     */
    private List<PlannedRank> askNodes(LogConnection c, JobView v, Placement where, long g,
            String store) {
        String request = UUID.randomUUID().toString();
        Map<String, String> settings = LaunchSpec.withoutSecrets(v.settings().orElseThrow().launch()
                .settings());
        Map<String, Map<Integer, String>> answers = new TreeMap<>();
        try (KafkaConsumer<byte[], byte[]> events =
                     c.log.reader(KafkaLog.EVENTS, false)) {
            for (String node : where.nodes()) {
                c.log.send(node,
                        new Command.PlanRestart(job, node, g, where.ranksOn(node).toString(), store, settings, request,
                        PeerHints.forRestart(v, g, where.ranksOn(node), node,
                                System.currentTimeMillis())));
            }
            long deadline = System.nanoTime() + PLAN_PATIENCE.toNanos();
            while (answers.size() < where.nodes().size() && System.nanoTime() < deadline) {
                for (var r : events.poll(Duration.ofMillis(100))) {
                    Event e = LogReplay.decoded(r).orElse(null);
                    if (e instanceof Event.RestartPlanned p && p.request().equals(request)) {
                        if (!p.problem().isEmpty()) {
                            System.err.println("ferry restart: node " + p.node() + " cannot plan: " + p.problem());
                        }
                        answers.put(p.node(), p.sources());
                    }
                }
            }
        }
        List<PlannedRank> plan = new ArrayList<>();
        Map<String, String> partners = PeerHints.partners(v, where);
        for (String node : where.nodes()) {
            Map<Integer, String> a = answers.get(node);
            // A lost node's ranks restart elsewhere: from its partner's cache if that node answered, else the store.
            String elsewhere = partners.containsKey(node)
                    && answers.containsKey(partners.get(node)) ? "partner" : "remote";
            if (a == null) {
                System.err.println("ferry restart: node " + node + " did not answer within " + PLAN_PATIENCE.toSeconds()
                        + " s (lost?): its ranks " + where.ranksOn(node) + " would restart on another node, from "
                        + (elsewhere.equals("partner") ? "the partner copies in " + partners.get(node) + "'s cache"
                                : "the store"));
            }
            for (int r : where.ranksOn(node).toList()) {
                plan.add(new PlannedRank(r, node, g, a == null ? elsewhere : a.getOrDefault(r, "remote")));
            }
        }
        plan.sort(Comparator.comparingInt(PlannedRank::rank));
        return plan;
    }

    /** Nothing runs: plan against this host's cache (the one-machine case). */
    private List<PlannedRank> planHere(OpenedStore o, FerryHome h, int ranks, long g)
            throws IOException {
        LocalCache cache = Staging.localCache(h.cache());
        String node = JobRunner.nodeName();
        List<PlannedRank> plan = new ArrayList<>();
        CommittedDigests committed = o.pipeline().repository().committed(job, g)
                .orElseThrow(() -> new IllegalStateException("generation " + g + " of " + job + " is not established"));
        for (int r = 0; r < ranks; r++) {
            plan.add(new PlannedRank(r, node, g, RestartSource.tier(o.pipeline(), cache, new ImageRef(job, g, r),
                    List.of(), committed.manifestSha256(r), PeerAuth.NONE)));
        }
        return plan;
    }

    private void print(List<PlannedRank> plan, long g) {
        if (json) {
            StringBuilder b = new StringBuilder("[");
            for (PlannedRank p : plan) {
                b.append(b.length() > 1 ? "," : "").append("{\"rank\":").append(p.rank()).append(",\"node\":\"")
                        .append(p.node()).append("\",\"generation\":").append(p.generation()).append(",\"source\":\"")
                        .append(p.source()).append("\"}");
            }
            System.out.println(b.append(']'));
            return;
        }
        System.out.println("restart plan for " + job + ": generation " + g);
        for (PlannedRank p : plan) {
            System.out.printf("  rank %d: node %s, %s%n", p.rank(), p.node(), p.source());
        }
    }
}
