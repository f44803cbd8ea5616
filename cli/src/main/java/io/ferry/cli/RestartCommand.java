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
    static final java.time.Duration PLAN_PATIENCE = java.time.Duration.ofSeconds(15);
    @picocli.CommandLine.Mixin
    LogOptions logOptions;
    @Option(names = "--set", paramLabel = "KEY=VALUE")
    Map<String, String> settings = new LinkedHashMap<>();

    @Override
    public Integer call() throws Exception {
        io.ferry.model.Names.requireJob(job);
        FerryHome h = logOptions.home();
        try (LogConnection c = LogConnection.open(h, logOptions.kafka)) {
            JobView v = c.replay().get(job)
                    .orElseThrow(() -> new IllegalArgumentException("no job " + job + " in the log"));
            long g = generation != null ? generation : v.newestEstablished().map(GenerationView::generation)
                    .orElseThrow(() -> new IllegalStateException("job " + job + " has no established snapshot"));
            String store = v.settings().orElseThrow().store();
            try (io.ferry.staging.OpenedStore o = StoreOptions.open(store, settings)) {
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
                java.util.Optional<io.ferry.model.Placement> where = v.placement()
                        .filter(io.ferry.model.Placement::complete);
                // a user's login may not ask agents (their answer opens the store the question names): planned here
                java.util.List<PlannedRank> plan = running && where.isPresent() && c.log.requester() == null
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
            java.time.Duration patience = io.ferry.model.Durations.parse(timeout);
            Runnable send = () -> c.log.send(io.ferry.eventlog.KafkaLog.COORDINATOR,
                    new Command.Restart(job, g, "requested by ferry restart"));
            if (noWait) {
                send.run();
                System.out.println("restart of " + job + " from generation " + g + " requested");
                return 0;
            }
            RestartWatch.Outcome o = RestartWatch.follow(c.log, job, g, v.ranks(), patience,
                    json ? io.ferry.staging.Progress.NONE : TerminalProgress.forStderr(), System.err, send);
            System.out.println(json ? o.json() : o.line());
            return o.complete() ? 0 : 1;
        }
    }

    /** One rank of the plan: where it would restart from. */
    record PlannedRank(int rank, String node, long generation, String source) {}

    /**
     * The job runs: each node of its placement plans its own ranks against its own cache (agents answer in the log).
     */
    private java.util.List<PlannedRank> askNodes(LogConnection c, JobView v, io.ferry.model.Placement where, long g,
            String store) {
        String request = java.util.UUID.randomUUID().toString();
        Map<String, String> settings = io.ferry.model.LaunchSpec.withoutSecrets(v.settings().orElseThrow().launch()
                .settings());
        Map<String, Map<Integer, String>> answers = new java.util.TreeMap<>();
        try (org.apache.kafka.clients.consumer.KafkaConsumer<byte[], byte[]> events =
                     c.log.reader(io.ferry.eventlog.KafkaLog.EVENTS, false)) {
            for (String node : where.nodes()) {
                c.log.send(node,
                        new Command.PlanRestart(job, node, g, where.ranksOn(node).toString(), store, settings, request,
                        io.ferry.coordinator.PeerHints.forRestart(v, g, where.ranksOn(node), node,
                                System.currentTimeMillis())));
            }
            long deadline = System.nanoTime() + PLAN_PATIENCE.toNanos();
            while (answers.size() < where.nodes().size() && System.nanoTime() < deadline) {
                for (var r : events.poll(java.time.Duration.ofMillis(100))) {
                    io.ferry.model.Event e = io.ferry.eventlog.LogReplay.decoded(r).orElse(null);
                    if (e instanceof io.ferry.model.Event.RestartPlanned p && p.request().equals(request)) {
                        if (!p.problem().isEmpty()) {
                            System.err.println("ferry restart: node " + p.node() + " cannot plan: " + p.problem());
                        }
                        answers.put(p.node(), p.sources());
                    }
                }
            }
        }
        java.util.List<PlannedRank> plan = new java.util.ArrayList<>();
        Map<String, String> partners = io.ferry.coordinator.PeerHints.partners(v, where);
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
        plan.sort(java.util.Comparator.comparingInt(PlannedRank::rank));
        return plan;
    }

    /** Nothing runs: plan against this host's cache (the one-machine case). */
    private java.util.List<PlannedRank> planHere(io.ferry.staging.OpenedStore o, FerryHome h, int ranks, long g)
            throws java.io.IOException {
        LocalCache cache = Staging.localCache(h.cache());
        String node = JobRunner.nodeName();
        java.util.List<PlannedRank> plan = new java.util.ArrayList<>();
        io.ferry.staging.CommittedDigests committed = o.pipeline().repository().committed(job, g)
                .orElseThrow(() -> new IllegalStateException("generation " + g + " of " + job + " is not established"));
        for (int r = 0; r < ranks; r++) {
            plan.add(new PlannedRank(r, node, g, RestartSource.tier(o.pipeline(), cache, new ImageRef(job, g, r),
                    java.util.List.of(), committed.manifestSha256(r), io.ferry.agent.peer.PeerAuth.NONE)));
        }
        return plan;
    }

    private void print(java.util.List<PlannedRank> plan, long g) {
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
