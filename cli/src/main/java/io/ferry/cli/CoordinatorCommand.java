package io.ferry.cli;

import io.ferry.coordinator.Coordinator;
import io.ferry.eventlog.EmbeddedAuth;
import io.ferry.eventlog.HostPort;
import io.ferry.model.Durations;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** {@code ferry coordinator}: the coordinator as a long-running service for any number of jobs. */
@Command(name = "coordinator", mixinStandardHelpOptions = true,
        description = {
                "Run the coordinator service (and, without --kafka, the embedded Kafka broker agents connect to)",
                "until SIGTERM or SIGINT."})
final class CoordinatorCommand implements Callable<Integer> {
    @Option(names = "--home", paramLabel = "DIR",
            description = "Ferry's state directory (default: $FERRY_HOME or ~/.ferry).")
    Path home;
    @Option(names = "--listen", defaultValue = "127.0.0.1:9092", paramLabel = "HOST:PORT",
            description = {"Where the embedded broker listens for agents and commands (0.0.0.0: every interface).",
                    "Clients must log in with SASL. On loopback, this user's own processes",
                    "find the broker's login by themselves; beyond loopback, set",
                    "kafka.embedded.users-file (see docs/operators.md).",
                    "Default ${DEFAULT-VALUE}."})
    String listen;
    @Option(names = "--kafka", paramLabel = "HOST:PORT",
            description = "A site Kafka cluster instead of the embedded broker.")
    String kafka;
    @CommandLine.Mixin
    HttpOptions http = new HttpOptions();
    @Option(names = "--heartbeat-timeout", defaultValue = "30s", paramLabel = "DURATION",
            description = "How long a node may stay silent before its ranks move elsewhere. Default ${DEFAULT-VALUE}.")
    String heartbeatTimeout;
    @Option(names = "--group", defaultValue = Coordinator.DEFAULT_GROUP, paramLabel = "NAME",
            description = {"Coordinators of one group share the jobs by partition of the events topic; when one stops",
                    "or goes silent, the others take its jobs over. Default ${DEFAULT-VALUE}."})
    String group;
    @Option(names = "--takeover-after", defaultValue = "10s", paramLabel = "DURATION",
            description = {"How long a coordinator of the group may be silent before the others take its jobs over",
                    "(Kafka's session timeout; the broker allows 6 s to 30 min). Default ${DEFAULT-VALUE}."})
    String takeoverAfter;

    @Override
    public Integer call() throws Exception {
        if (kafka == null) {
            HostPort.parse(listen, "--listen");
        }
        http.check();
        Duration timeout = Durations.parse(heartbeatTimeout);
        if (timeout.isZero()) {
            throw new IllegalArgumentException("--heartbeat-timeout must be positive");
        }
        KafkaAccess access = KafkaAccess.configured(kafka); // a bad kafka.* key or users file fails here
        if (kafka == null && !access.embedded().required()
                && !HostPort.parse(listen, "--listen").loopbackOnly()) {
            throw new IllegalArgumentException("--listen " + listen
                    + " is beyond loopback, where the embedded broker requires SASL:"
                    + " set " + EmbeddedAuth.USERS_FILE_KEY
                    + "=PATH (an owner-only file of NAME:PASSWORD lines)"
                    + " in $FERRY_CONFIG or as FERRY_KAFKA_EMBEDDED_USERS_FILE");
        }
        CountDownLatch stop = new CountDownLatch(1);
        CoordinatorService s = CoordinatorService.start(FerryHome.resolve(home), access, listen, http, timeout,
                Map.of(), "coordinator", System.out, group, Durations.parse(takeoverAfter));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            s.close();
            stop.countDown();
        }, "ferry-coordinator-stop"));
        System.out.println("ferry coordinator: serving jobs; agents and ferry run connect with --kafka "
                + s.bootstrapServers()
                + (access.embedded().required() ? " and a login of " + access.embedded().users().size()
                + " user(s) of " + EmbeddedAuth.USERS_FILE_KEY + " (SASL/PLAIN, "
                + access.embedded().protocol() + ")" : "")
                + s.loopbackLogin().map(f -> "; this user's own processes log in on loopback from " + f).orElse(""));
        EmbeddedAuth users = access.embedded();
        if (kafka == null && users.owners()) {
            System.out.println("ferry coordinator: jobs have owners: " + users.operators().stream().sorted().toList()
                    + " control every job (operators); " + users.restricted() + " each their own");
        } else if (kafka == null && users.required()) {
            System.out.println("ferry coordinator: every login controls every job: name the operators' logins in "
                    + EmbeddedAuth.OPERATORS_KEY + " so that the others control only their own");
        }
        System.out.flush();
        while (!stop.await(1, TimeUnit.SECONDS)) {
            if (s.coordinator().fenced()) {
                System.err.println("ferry coordinator: another coordinator started over this home's identity ("
                        + FerryHome.resolve(home).dir().resolve("coordinator.id") + ") and took its jobs: stopping");
                return 1;
            }
        }
        return 0;
    }
}
