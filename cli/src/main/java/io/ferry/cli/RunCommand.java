package io.ferry.cli;

import io.ferry.agent.Quiesce;
import io.ferry.agent.capture.Capturers;
import io.ferry.model.Durations;
import io.ferry.model.Names;
import io.ferry.model.PartnerRing;
import io.ferry.model.Placement;
import io.ferry.staging.StagingConfig;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code ferry run}: a job under Ferry on this machine, in the foreground. */
@Command(name = "run", mixinStandardHelpOptions = true,
        description =
                "Run a job of N ranks (child processes) with periodic checkpoints; exits 0 only if every rank exits 0.")
final class RunCommand implements Callable<Integer> {
    @Option(names = "--job", required = true, paramLabel = "JOB", description = "Job id: [A-Za-z0-9._-]{1,128}.")
    String job;
    @Option(names = "--ranks", required = true, paramLabel = "N")
    int ranks;
    @Option(names = "--interval", defaultValue = "60s", paramLabel = "DURATION",
            description = "Checkpoint interval (500ms, 5s, 2m, 1h; 0 = only on request). Default ${DEFAULT-VALUE}.")
    String interval;
    @Option(names = "--auto-recover",
            description = "Roll every rank back to the newest established snapshot when one dies.")
    boolean autoRecover;
    @Option(names = "--halt-grace", defaultValue = "30s", paramLabel = "DURATION", description = {
            "On SIGTERM (Slurm's --signal=TERM@SECONDS, scancel --signal=TERM): halt as `ferry halt` does, a final",
            "checkpoint established within this time, then the job stops; 0: stop the ranks at once."
                    + " Default ${DEFAULT-VALUE}."})
    String haltGrace;
    @Option(names = "--store", paramLabel = "URI", description = "Remote store (default: <home>/store).")
    String store;
    @Option(names = "--home", paramLabel = "DIR",
            description = "Ferry's state directory (default: $FERRY_HOME or ~/.ferry).")
    Path home;
    @Option(names = "--kafka", paramLabel = "HOST:PORT",
            description = {"The Kafka log of a running `ferry coordinator`",
            "(or any Kafka cluster) instead of the embedded broker."})
    String kafka;
    @Option(names = "--nodes", split = ",", paramLabel = "NODE,...",
            description = {"Submit to the agents of these nodes",
            "(`ferry agent --node NAME`) instead of running the ranks here; needs --kafka and --store."})
    List<String> nodes;
    @Option(names = "--placement", defaultValue = "block", paramLabel = "block|cyclic",
            description =
                    "With --nodes: consecutive ranks per node (block, default) or rank r on node r mod n (cyclic).")
    String placement;
    @Option(names = "--map", paramLabel = "RANKS:NODE,...",
            description = "Instead of --nodes: an explicit map, e.g. 0-3:n1,4-7:n2.")
    String map;
    @Option(names = "--launch", paramLabel = "'LAUNCHER ARGS'", description = {"The site's launcher starts the ranks:",
            "Ferry runs `LAUNCHER ARGS ferry rank --job J -- PROGRAM ARGS` (e.g. --launch 'mpirun -n 64 --hostfile h'",
            "or 'srun -n 64'); each rank joins the `ferry agent` of its node. With --auto-recover a failure stops the",
            "launcher and runs it again from the newest established generation. With --kafka, agents must run on",
            "every node; without, everything runs on this host."})
    String launch;
    @Option(names = "--capture-timeout", defaultValue = "60s", paramLabel = "DURATION",
            description = "How long a checkpoint waits for every rank. Default ${DEFAULT-VALUE}.")
    String captureTimeout;
    @Option(names = "--signal", defaultValue = "USR2", paramLabel = "NAME",
            description = "Signal of signal mode. Default ${DEFAULT-VALUE}.")
    String signal;
    @Option(names = "--capture", defaultValue = "app", paramLabel = "METHOD",
            description = {
                    "How ranks are captured: app (the cooperative protocol, default), proc (transparent ELF core",
                    "dumps; restoring them needs an external restorer), criu or dmtcp (where installed)."})
    String capture;
    @CommandLine.Mixin
    HttpOptions http = new HttpOptions();
    @Option(names = "--set", paramLabel = "KEY=VALUE",
            description = "Configuration, repeatable (see docs/reference/configuration.md).")
    Map<String, String> settings = new LinkedHashMap<>();
    @Option(names = "--partner",
            description = {"After each capture, copy every node's images into one other node's cache",
            "(SCR's PARTNER level): a lost node's ranks then restart from that copy, not the remote store."})
    boolean partner;
    @Option(names = "--failure-domains", paramLabel = "FILE",
            description = {"With --partner: lines 'NODE DOMAIN' (or a",
            "hostfile with 'domain=D' on its lines); each node's partner is picked in another domain where possible."})
    Path failureDomains;
    @Parameters(arity = "1..*", paramLabel = "PROGRAM", description = "The program every rank runs, after --.")
    List<String> command;

    /** The placement of --nodes/--placement or --map, or null for "every rank here". */
    private Placement placement() {
        if (map != null && nodes != null) {
            throw new IllegalArgumentException("give --nodes or --map, not both");
        }
        if (map != null) {
            return Placement.map(map, ranks);
        }
        if (nodes == null) {
            return null;
        }
        return switch (placement) {
            case "block" -> Placement.block(ranks, nodes);
            case "cyclic" -> Placement.cyclic(ranks, nodes);
            default -> throw new IllegalArgumentException("--placement must be block or cyclic, got '" + placement
                    + "'");
        };
    }

    /** --launch: the launcher places the ranks; only the cooperative protocol restarts ranks it did not start. */
    private void checkLauncher(Placement where) throws IOException {
        if (where != null) {
            throw new IllegalArgumentException(
                    "--launch places the ranks by the launcher's own rules: drop --nodes/--map"
                    + " (give the launcher its hostfile)");
        }
        if (launch.isBlank()) {
            throw new IllegalArgumentException("--launch needs the launcher's command, e.g. --launch 'mpirun -n "
                    + ranks + "'");
        }
        if (!"app".equals(capture)) {
            throw new IllegalArgumentException("--launch works with --capture app (the cooperative protocol); "
                    + capture + " restores a process image itself, which a launcher cannot start");
        }
        if (kafka != null && store == null) {
            throw new IllegalArgumentException(
                    "--launch with --kafka: give --store (a store every node reaches: a Lustre"
                    + " path, hdfs://, s3://)");
        }
        SiteLauncher.shim(); // bin/ferry-rank must be there before anything starts
    }

    /** --partner and --failure-domains, as the settings every node and the coordinator read. */
    private void partnerSettings() throws IOException {
        if (failureDomains != null && !partner) {
            throw new IllegalArgumentException("--failure-domains chooses partners: give --partner too");
        }
        if (!partner) {
            return;
        }
        if (kafka == null) {
            System.err.println(
                    "ferry run: --partner: this job runs on one node, which has no partner; no copies are made");
        }
        settings.put(StagingConfig.PARTNER.name(), "true");
        if (failureDomains != null) {
            try {
                settings.put(StagingConfig.PARTNER_DOMAINS.name(),
                        PartnerRing.domainsFromLines(Files.readAllLines(failureDomains)));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--failure-domains " + failureDomains + ": " + e.getMessage(), e);
            }
        }
    }

    @Override
    public Integer call() throws Exception {
        Names.requireJob(job);
        if (ranks < 1) {
            throw new IllegalArgumentException("--ranks must be >= 1, got " + ranks);
        }
        if (!"app".equals(capture)) {
            Capturers.of(capture).unavailable().ifPresent(why -> {
                throw new IllegalStateException("--capture " + capture + " is not available here: " + why);
            });
        }
        http.check(); // a bad address or token file is refused before anything starts
        FerryHome h = FerryHome.resolve(home);
        Duration every = Durations.parse(interval);
        Placement where = placement();
        if (where != null && (kafka == null || store == null)) {
            throw new IllegalArgumentException(
                    "--nodes and --map submit to running agents: give --kafka (the coordinator's"
                    + " log) and --store (a store every node reaches: a Lustre path, hdfs://, s3://)");
        }
        if (launch != null) {
            checkLauncher(where);
        }
        // kafka.*: the event log's TLS/SASL login, from the file, FERRY_KAFKA_* and --set; never a job setting
        KafkaAccess access = KafkaAccess.of(kafka, Configuration.kafka(settings, System.getenv()));
        settings = Configuration.merged(settings, store); // the file's and FERRY_* values under --set
        partnerSettings();
        JobRunner.Spec spec = new JobRunner.Spec(job, ranks, every, autoRecover,
                store != null ? store : h.store().toString(), h, access, http, where, launch,
                new JobRunner.Program(command, new Quiesce(capture, Durations.parse(captureTimeout), signal),
                        settings));
        try (JobRunner runner = new JobRunner(spec)) {
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                runner.stopLauncher(); // mpirun stops the ranks it started
                runner.agent().ifPresent(a -> {
                    try {
                        a.stopRanks(); // the ranks of this host must not outlive ferry run
                    } catch (InterruptedException | RuntimeException ignored) {
                        // exiting anyway
                    }
                });
            }));
            Duration grace = Durations.parse(haltGrace);
            if (!grace.isZero()) {
                HaltOnTerm.install(runner, grace);
            }
            runner.start(System.out);
            boolean ok = runner.awaitFinish();
            runner.settle(Duration.ofSeconds(60));
            runner.read(v -> {
                ListCommand.print(v, System.out);
                return v;
            });
            return ok ? 0 : 1;
        }
    }
}
