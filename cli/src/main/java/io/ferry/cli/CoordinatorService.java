package io.ferry.cli;

import io.ferry.coordinator.Coordinator;
import io.ferry.coordinator.CoordinatorMeters;
import io.ferry.coordinator.CoordinatorSettings;
import io.ferry.coordinator.http.HttpApi;
import io.ferry.eventlog.EmbeddedKafka;
import io.ferry.eventlog.KafkaLog;
import io.ferry.eventlog.LogSettings;
import io.ferry.model.ConfigKey;

import java.io.Closeable;
import java.io.IOException;
import java.io.PrintStream;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

/**
 * The service side of Ferry in this process: the event log (the home's embedded KRaft
 * broker, listening on {@code listen}, unless an external {@code kafka} is given), the
 * coordinator and its HTTP API. {@code ferry coordinator} runs it alone; {@code ferry run}
 * runs it beside one agent, which is the one-node cluster.
 */
final class CoordinatorService implements Closeable {

    private EmbeddedKafka kafka;
    private KafkaLog log;
    private Coordinator coordinator;
    private HttpApi http;
    private final FerryHome home;
    private boolean ownsRunFile;

    private CoordinatorService(FerryHome home) {
        this.home = home;
    }

    /**
     * Starts the services; {@code owner} names what runs them in the home's run file (a job,
     * or "coordinator"), so another command of this home finds the broker.
     */
    static CoordinatorService start(FerryHome home, KafkaAccess kafka, String listen, HttpOptions http,
                                    Duration heartbeatTimeout, Map<String, String> secrets, String owner,
                                    PrintStream out)
            throws IOException, InterruptedException {
        return start(home, kafka, listen, http, heartbeatTimeout, secrets, owner, out,
                Coordinator.DEFAULT_GROUP, Coordinator.DEFAULT_TAKEOVER);
    }

    /**
     * As above, the coordinator a member of {@code group}, taking over a silent member's jobs after
     * {@code takeoverAfter}.
     */
    static CoordinatorService start(FerryHome home, KafkaAccess access, String listen, HttpOptions http,
                                    Duration heartbeatTimeout, Map<String, String> secrets, String owner,
                                    PrintStream out, String group, Duration takeoverAfter)
            throws IOException, InterruptedException {
        CoordinatorSettings settings = settings(); // a bad coordinator.* value fails before anything starts
        CoordinatorService s = new CoordinatorService(home);
        try {
            if (!access.external()) {
                Optional<Properties> other = home.activeRun();
                if (other.isPresent()) {
                    throw new IllegalStateException("ferry (" + other.get().getProperty("job") + ", pid "
                            + other.get().getProperty("pid") + ") already serves " + home.dir()
                            + "; use another --home, or --kafka " + other.get().getProperty("bootstrap"));
                }
                // a status command may hold it
                s.kafka = EmbeddedKafka.start(home.kafka(), EmbeddedKafka.Options.defaults().listen(listen)
                        .auth(access.embedded()).patience(Duration.ofSeconds(60)));
                s.log = new KafkaLog(s.kafka.localBootstrapServers(), s.kafka.localClient(), LogSettings.EMBEDDED);
            } else {
                s.log = new KafkaLog(access.bootstrap(), access.client(), LogSettings.EXTERNAL);
            }
            s.coordinator = new Coordinator(s.log, Clock.systemUTC(), heartbeatTimeout, secrets)
                    .inGroup(group, takeoverAfter, home.coordinatorInstance()).configured(settings)
                    .metered(new CoordinatorMeters(ProcessMetrics.registry())).start();
            if (!s.coordinator.awaitLive(Duration.ofSeconds(60))) {
                throw new IOException("the coordinator did not catch up with the log at " + s.log.bootstrapServers()
                        + " within 60 s");
            }
            // Only now does the home say where its log is: a command another process sends from then on (ferry
            // checkpoint, halt, restart) is read. Written as soon as the broker served, a checkpoint sent before the
            // coordinator had placed its reader of the commands topic was read past, and lost.
            home.writeRun(owner, s.bootstrapServers(), s.kafka != null && access.embedded().required());
            s.ownsRunFile = true;
            s.http = startHttp(s.coordinator, http, out);
            return s;
        } catch (IOException | RuntimeException | InterruptedException e) {
            s.close();
            throw e;
        }
    }

    /**
     * This host's {@code coordinator.*} settings (its configuration file, {@code FERRY_COORDINATOR_*}); a bad one fails
     * here.
     */
    static CoordinatorSettings settings() throws IOException {
        Map<String, String> set = new HashMap<>();
        for (ConfigKey<?> k : CoordinatorSettings.TABLE.keys()) {
            Configuration.processSetting(k.name(), System.getenv()).ifPresent(v -> set.put(k.name(), v));
        }
        return CoordinatorSettings.of(set);
    }

    KafkaLog log() {
        return log;
    }

    /** Where agents and commands connect: the embedded broker's client listener, or the cluster given. */
    /** Where the embedded broker on loopback left its own user's login; empty for a site's Kafka or beyond loopback. */
    Optional<Path> loopbackLogin() {
        return kafka != null ? kafka.loginFile() : Optional.empty();
    }

    String bootstrapServers() {
        return kafka != null ? kafka.bootstrapServers() : log.bootstrapServers();
    }

    Coordinator coordinator() {
        return coordinator;
    }

    /**
     * Serves the dashboard and API on {@code address} ("HOST:PORT", or "off"); when the port is
     * taken (another job on this machine), on any free port, said on {@code out}.
     */
    private static HttpApi startHttp(Coordinator coordinator, HttpOptions options, PrintStream out) throws IOException {
        Optional<InetSocketAddress> a = options.listen();
        Optional<String> token = options.token();
        if (a.isEmpty()) {
            return null;
        }
        HttpApi api;
        try {
            api = HttpApi.start(coordinator, a.get(), token, ProcessMetrics.registry()::scrape);
        } catch (BindException e) {
            api = HttpApi.start(coordinator, new InetSocketAddress(a.get().getAddress(), 0), token,
                    ProcessMetrics.registry()::scrape);
            out.println("ferry: port " + a.get().getPort() + " is taken; the dashboard listens on another port");
        }
        out.println("ferry: dashboard " + api.uri() + " (JSON under " + api.uri() + "api/jobs, Prometheus " + api.uri()
                + "metrics" + (token.isPresent() ? "; a bearer token is required" : "") + ")");
        return api;
    }

    @Override
    public void close() {
        if (http != null) {
            http.close();
        }
        if (coordinator != null) {
            coordinator.close();
        }
        if (log != null) {
            log.close();
        }
        if (kafka != null) {
            kafka.close();
        }
        if (ownsRunFile) {
            try {
                home.clearRun();
            } catch (IOException e) {
                System.err.println("ferry: cannot remove the run file in " + home.dir() + ": " + e.getMessage());
            }
        }
    }
}
