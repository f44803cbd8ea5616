package io.ferry.eventlog;

import io.ferry.model.OwnerOnly;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.types.Password;
import org.apache.kafka.common.security.plain.internals.PlainSaslServerProvider;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.storage.Formatter;
import org.apache.kafka.server.common.Feature;
import org.apache.kafka.server.common.MetadataVersion;

import java.io.Closeable;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.nio.channels.FileChannel;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.Provider;
import java.security.SecureRandom;
import java.security.Security;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A single-node KRaft broker (broker and controller in one) inside this JVM, so one machine
 * runs the same code path as a cluster. Its log lives in {@code dataDir} and survives
 * restarts: a coordinator started again finds every event it wrote. Its client listener is on
 * loopback unless {@link #start(Path, Options)} names another address ({@link Options#listen(String)}:
 * agents on other hosts connect there); the controller listener is always on loopback.
 *
 * <p>Every listener requires SASL/PLAIN ({@link EmbeddedAuth}): anyone who can write the log can
 * command every agent to run a job's program. A client listener beyond loopback takes the site's
 * users; one on loopback takes its own user's login ({@link LoopbackLogin}, a password drawn once
 * per log and left in a file only that user reads), and the site's users too where a users
 * file is set. The broker's own clients (this JVM's coordinator and agent, the broker to itself
 * and to its controller) use a second listener on loopback, and the controller listener, which
 * accept only an internal user whose random password lives in this JVM's memory: they never need
 * a site's users or its TLS trust.
 */
public final class EmbeddedKafka implements Closeable {
    /** Another process holds the broker of this data directory (it is starting or running it). */
    public static final class BusyException extends IOException {
        BusyException(Path dataDir) {
            super("the embedded Kafka log in " + dataDir + " is in use by another ferry process");
        }
    }

    private static final String INTERNAL_USER = "ferry-broker";
    /** How long the controller waits for a killed broker's old incarnation before it admits the restarted one. */
    static final int BROKER_SESSION_MILLIS = 3000;

    private final KafkaRaftServer server;
    private final String bootstrap;
    private final String localBootstrap;
    private final KafkaClientSettings localClient;
    private FileChannel lockChannel;
    /** The loopback login: its client settings, the file it was left in, its password; null beyond loopback. */
    private KafkaClientSettings login;
    private Path loginFile;
    private String loginPassword;
    private int controllerPort;

    private EmbeddedKafka(KafkaRaftServer server, String bootstrap, String localBootstrap,
            KafkaClientSettings localClient) {
        this.server = server;
        this.bootstrap = bootstrap;
        this.localBootstrap = localBootstrap;
        this.localClient = localClient;
    }

    /**
     * How {@link #start(Path, Options)} starts the broker: {@link #defaults()}, with one input changed
     * by each of the other methods.
     *
     * @param listen the client listener ("HOST:PORT", port 0: any free one). A wildcard host (0.0.0.0)
     *               listens everywhere and advertises this machine's host name
     * @param auth what the client listener requires. Refused (before anything starts) when the listener is
     *             beyond loopback and {@code auth} requires nothing
     * @param patience how long to wait for another process to let go of the data directory; zero: not at all
     */
    public record Options(String listen, EmbeddedAuth auth, Duration patience) {
        public Options {
            Objects.requireNonNull(listen, "listen");
            Objects.requireNonNull(auth, "auth");
            Objects.requireNonNull(patience, "patience");
        }

        /** The client listener on loopback, any free port; {@link EmbeddedAuth#NONE}; no waiting. */
        public static Options defaults() {
            return new Options("127.0.0.1:0", EmbeddedAuth.NONE, Duration.ZERO);
        }

        /** These options with the client listener on {@code listen} ("HOST:PORT"). */
        public Options listen(String listen) {
            return new Options(listen, auth, patience);
        }

        /** These options with the client listener requiring {@code auth}. */
        public Options auth(EmbeddedAuth auth) {
            return new Options(listen, auth, patience);
        }

        /** These options waiting up to {@code patience} for another process to let go. */
        public Options patience(Duration patience) {
            return new Options(listen, auth, patience);
        }
    }

    /**
     * Starts the broker over {@code dataDir}. Only one process may: two brokers over one log
     * corrupt it (seen: a status command racing a starting run). An exclusive lock on
     * {@code <dataDir>.lock} guards it; {@link BusyException} if another process holds it.
     */
    public static EmbeddedKafka start(Path dataDir) throws IOException {
        Options defaults = Options.defaults();
        return startOnce(dataDir, defaults.listen(), defaults.auth());
    }

    /**
     * {@link #start(Path)} with {@code options}: the client listener on {@link Options#listen()},
     * requiring {@link Options#auth()} (refused, before anything starts, when the listener is beyond
     * loopback and that requires nothing), waiting up to {@link Options#patience()} for another process
     * to let go ({@link BusyException} at once when that is zero).
     */
    public static EmbeddedKafka start(Path dataDir, Options options) throws IOException, InterruptedException {
        if (options.patience().isZero()) {
            return startOnce(dataDir, options.listen(), options.auth());
        }
        long deadline = System.nanoTime() + options.patience().toNanos();
        while (true) {
            try {
                return startOnce(dataDir, options.listen(), options.auth());
            } catch (BusyException busy) {
                if (System.nanoTime() > deadline) {
                    throw busy;
                }
                Thread.sleep(200);
            }
        }
    }

    /** One try of {@link #start(Path, Options)}: {@link BusyException} if another process holds the lock. */
    private static EmbeddedKafka startOnce(Path dataDir, String listen, EmbeddedAuth auth) throws IOException {
        HostPort hp = HostPort.parse(listen, "--listen");
        if (!auth.required() && !hp.loopbackOnly()) {
            throw new IllegalArgumentException("--listen " + listen
                    + " is beyond loopback, where the embedded broker requires"
                    + " SASL: set " + EmbeddedAuth.USERS_FILE_KEY
                    + "=PATH (an owner-only file of NAME:PASSWORD lines)");
        }
        OwnerOnly.createDirectories(dataDir);
        Path lockFile = dataDir.resolveSibling(dataDir.getFileName() + ".lock");
        FileChannel ch = FileChannel.open(lockFile,
                StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        try {
            if (ch.tryLock() == null) {
                throw new BusyException(dataDir);
            }
            EmbeddedKafka k = startLocked(dataDir, hp, auth);
            k.lockChannel = ch;
            return k;
        } catch (OverlappingFileLockException e) { // held by this very JVM
            ch.close();
            throw new BusyException(dataDir);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    private static EmbeddedKafka startLocked(Path dataDir, HostPort listen, EmbeddedAuth auth) throws IOException {
        preferKafkaPlain();
        try (PortClaims ports = new PortClaims()) { // held until the broker has bound them
            return startLocked(dataDir, listen, auth, ports);
        }
    }

    private static EmbeddedKafka startLocked(Path dataDir, HostPort listen, EmbeddedAuth auth, PortClaims ports)
            throws IOException {
        if (listen.port() != 0) {
            ports.avoid(listen.port()); // not bound yet: bind(0) may draw it for the controller
        }
        int brokerPort = listen.port() == 0 ? ports.claim() : listen.port();
        int controllerPort = ports.claim();
        String advertised = listen.wildcard() ? InetAddress.getLocalHost().getHostName() : listen.host();
        String clientAddress = HostPort.bracket(advertised) + ":" + brokerPort;
        Map<String, Object> props = new HashMap<>();
        props.put("process.roles", "broker,controller");
        props.put("node.id", "1");
        props.put("controller.quorum.voters", "1@127.0.0.1:" + controllerPort);
        // Every listener requires a login, loopback too: whoever can write the log can have an agent run a
        // program as the agent's user. On loopback the broker's own user logs in with a password drawn once
        // per log and left where only that user reads it (LoopbackLogin); beyond loopback, the site's users.
        String loopbackPassword = null;
        if (listen.loopbackOnly()) {
            loopbackPassword = loopbackPassword(dataDir);
            auth = auth.with(LoopbackLogin.USER, loopbackPassword);
        }
        int internalPort = ports.claim();
        String localBootstrap = "127.0.0.1:" + internalPort;
        String internalPassword = randomPassword();
        KafkaClientSettings localClient = new KafkaClientSettings(EmbeddedAuth.plainClient("SASL_PLAINTEXT",
                INTERNAL_USER, internalPassword));
        String internalJaas = EmbeddedAuth.plainServerJaas(Map.of(INTERNAL_USER, internalPassword),
                Map.entry(INTERNAL_USER, internalPassword));
        props.put("listeners", "CLIENT://" + listen.bracketedHost() + ":" + brokerPort + ",INTERNAL://" + localBootstrap
                + ",CONTROLLER://127.0.0.1:" + controllerPort);
        props.put("advertised.listeners", "CLIENT://" + clientAddress + ",INTERNAL://" + localBootstrap);
        // The controller listener too: an admin client speaking to it directly (bootstrap.controllers) could
        // otherwise delete or reconfigure Ferry's topics without a login.
        props.put("listener.security.protocol.map", "CLIENT:" + auth.protocol()
                + ",INTERNAL:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT");
        props.put("inter.broker.listener.name", "INTERNAL");
        props.put("sasl.enabled.mechanisms", "PLAIN");
        props.put("sasl.mechanism.inter.broker.protocol", "PLAIN");
        props.put("sasl.mechanism.controller.protocol", "PLAIN");
        // the site's users (and the loopback login) on the client listener only; the internal user on the others
        props.put("listener.name.client.plain.sasl.jaas.config",
                new Password(EmbeddedAuth.plainServerJaas(auth.users(), null)));
        props.put("listener.name.internal.plain.sasl.jaas.config", new Password(
                internalJaas));
        props.put("listener.name.controller.plain.sasl.jaas.config", new Password(
                internalJaas));
        auth.ssl().forEach((k, v) -> props.put("listener.name.client." + k, v));
        props.put("message.max.bytes", Integer.toString(KafkaLog.MAX_RECORD_BYTES));
        props.put("controller.listener.names", "CONTROLLER");
        props.put("log.dirs", dataDir.toString());
        props.put("offsets.topic.replication.factor", "1");
        props.put("offsets.topic.num.partitions", "1");
        props.put("transaction.state.log.replication.factor", "1");
        props.put("transaction.state.log.min.isr", "1");
        props.put("share.coordinator.state.topic.replication.factor", "1");
        props.put("share.coordinator.state.topic.min.isr", "1");
        props.put("group.initial.rebalance.delay.ms", "0");
        // A broker killed (SIGKILL, power) and started again over the same log is refused by its own
        // controller until the dead incarnation's session expires (DUPLICATE_BROKER_REGISTRATION): with
        // Kafka's 9 s default, a restarted coordinator served nothing for 8-9 s of it. Broker and
        // controller share this JVM, so a short session costs nothing on the wire; 3 s still rides out
        // a long GC pause of the process before the broker would be fenced from itself.
        props.put("broker.session.timeout.ms", Integer.toString(BROKER_SESSION_MILLIS));
        props.put("broker.heartbeat.interval.ms", "500");
        props.put("auto.create.topics.enable", "false");
        props.put("num.partitions", "1");
        if (auth.owners()) {
            BrokerAcls.configure(props, INTERNAL_USER, auth.operators());
        }
        KafkaConfig config = new KafkaConfig(props, false);
        if (!Files.exists(dataDir.resolve("meta.properties"))) {
            try {
                new Formatter().setPrintStream(new PrintStream(PrintStream.nullOutputStream()))
                        .setSupportedFeatures(Feature.PRODUCTION_FEATURES)
                        .setNodeId(1).setClusterId(Uuid.randomUuid().toString())
                        .addDirectory(dataDir.toString()).setMetadataLogDirectory(dataDir.toString())
                        .setReleaseVersion(MetadataVersion.latestProduction())
                        .setControllerListenerName("CONTROLLER").run();
            } catch (Exception e) {
                throw new IOException("cannot format the embedded Kafka log in " + dataDir + ": " + e.getMessage(), e);
            }
        }
        KafkaRaftServer server = new KafkaRaftServer(config, Time.SYSTEM);
        try {
            server.startup();
        } catch (RuntimeException e) {
            server.shutdown();
            throw new IOException("the embedded Kafka broker cannot listen on " + listen + ": " + e.getMessage(), e);
        }
        EmbeddedKafka k = new EmbeddedKafka(server, clientAddress, localBootstrap, localClient);
        k.controllerPort = controllerPort;
        // Rights and request topics where jobs have owners; the request topics removed once they have none
        // (the marker says a log ever had them, so that a log that never did pays nothing at start).
        Path owned = dataDir.resolveSibling(dataDir.getFileName() + ".owners");
        if (auth.owners() || Files.exists(owned)) {
            try {
                BrokerAcls.apply(localBootstrap, localClient, auth);
                if (auth.owners()) {
                    OwnerOnly.writePrivate(owned, String.join("\n", auth.operators()) + "\n");
                } else {
                    Files.delete(owned);
                }
            } catch (IOException e) {
                k.close();
                throw e;
            }
        }
        if (loopbackPassword != null) {
            try {
                k.login = new KafkaClientSettings(EmbeddedAuth.plainClient(auth.protocol(), LoopbackLogin.USER,
                        loopbackPassword));
                k.loginFile = LoopbackLogin.publish(brokerPort, loopbackPassword);
                k.loginPassword = loopbackPassword;
            } catch (IOException | RuntimeException e) {
                k.close();
                throw e;
            }
        }
        return k;
    }

    /** Where clients connect: the client listener's advertised address. */
    public String bootstrapServers() {
        return bootstrap;
    }

    /**
     * Where this JVM's own clients connect: {@link #bootstrapServers()}, or with authentication
     * on, the internal listener on loopback (use {@link #localClient()} with it).
     */
    public String localBootstrapServers() {
        return localBootstrap;
    }

    /** The client settings of {@link #localBootstrapServers()}: none, or the internal user's login. */
    public KafkaClientSettings localClient() {
        return localClient;
    }

    /**
     * The client settings that log in at {@link #bootstrapServers()} as this broker's own user on
     * loopback ({@link LoopbackLogin}); {@link KafkaClientSettings#NONE} for a listener beyond
     * loopback, whose clients bring a site's login. {@link KafkaLog} finds it by itself; a raw
     * Kafka client (a test's, a benchmark's) adds these settings.
     */
    public KafkaClientSettings login() {
        return login != null ? login : KafkaClientSettings.NONE;
    }

    /** Where the loopback login was left for this broker's own user ({@link LoopbackLogin}); empty beyond loopback. */
    public Optional<Path> loginFile() {
        return Optional.ofNullable(loginFile);
    }

    /** The controller listener's address, on loopback (for tests that knock on it). */
    String controllerAddress() {
        return "127.0.0.1:" + controllerPort;
    }

    /**
     * The loopback login's password, kept beside the log ({@code <dataDir>.login}, 0600) so that
     * it outlives a restart: agents that logged in before a coordinator restarts log in again
     * with what they read at their start. Drawn when the file is missing or unreadable.
     */
    private static String loopbackPassword(Path dataDir) throws IOException {
        Path file = dataDir.resolveSibling(dataDir.getFileName() + ".login");
        if (Files.isRegularFile(file)) {
            String kept = Files.readString(file, StandardCharsets.US_ASCII).strip();
            if (kept.matches("[0-9a-f]{48}")) {
                return kept;
            }
        }
        String drawn = randomPassword();
        OwnerOnly.writePrivate(file, drawn + "\n");
        return drawn;
    }

    /**
     * Kafka's SASL/PLAIN server first among the JVM's security providers. Every listener logs in
     * with PLAIN, and the JDK hands a PLAIN login to the first provider that serves the mechanism:
     * a process that has also run Hadoop's SASL RPC server (a MiniDFSCluster, in the tests) has
     * Hadoop's PLAIN server registered before Kafka's, which then answers Kafka's listeners and
     * refuses every login, the broker's own ("invalid credentials"), so the broker never starts.
     */
    private static synchronized void preferKafkaPlain() {
        PlainSaslServerProvider.initialize(); // registered, at the end, if it was not
        Provider[] all = Security.getProviders();
        for (Provider p : all) {
            if (p instanceof PlainSaslServerProvider && p != all[0]) {
                Security.removeProvider(p.getName());
                Security.insertProviderAt(p, 1);
                return;
            }
        }
    }

    private static String randomPassword() {
        byte[] b = new byte[24];
        new SecureRandom().nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    @Override
    public void close() {
        if (loginFile != null) {
            LoopbackLogin.withdraw(loginFile, loginPassword);
        }
        server.shutdown();
        server.awaitShutdown();
        try {
            if (lockChannel != null) {
                lockChannel.close(); // releases the lock
            }
        } catch (IOException ignored) {
            // the lock dies with the channel either way
        }
    }
}
