package io.ferry.eventlog;

import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.storage.Formatter;
import org.apache.kafka.server.common.Feature;
import org.apache.kafka.server.common.MetadataVersion;

import java.io.Closeable;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * A single-node KRaft broker (broker and controller in one) inside this JVM, so one machine
 * runs the same code path as a cluster. Its log lives in {@code dataDir} and survives
 * restarts: a coordinator started again finds every event it wrote. Its client listener is on
 * loopback unless {@link #start(Path, String)} names another address (agents on other hosts
 * connect there); the controller listener is always on loopback.
 *
 * <p>A client listener beyond loopback requires SASL ({@link EmbeddedAuth}): anyone who can
 * write the log can command every agent to run a job's program. With authentication on, the
 * broker's own clients (this JVM's coordinator and agent, and the broker to itself) use a
 * second listener on loopback that accepts only an internal user whose random password lives
 * in this JVM's memory: they never need a site's users or its TLS trust. The controller listener
 * stays unauthenticated on loopback: the service host's own users are trusted with it.
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
    private java.nio.channels.FileChannel lockChannel;

    private EmbeddedKafka(KafkaRaftServer server, String bootstrap, String localBootstrap, KafkaClientSettings localClient) {
        this.server = server;
        this.bootstrap = bootstrap;
        this.localBootstrap = localBootstrap;
        this.localClient = localClient;
    }

    /**
     * Starts the broker over {@code dataDir}. Only one process may: two brokers over one log
     * corrupt it (seen: a status command racing a starting run). An exclusive lock on
     * {@code <dataDir>.lock} guards it; {@link BusyException} if another process holds it.
     */
    public static EmbeddedKafka start(Path dataDir) throws IOException {
        return start(dataDir, "127.0.0.1:0");
    }

    /**
     * {@link #start(Path)} with the client listener on {@code listen} ("HOST:PORT", port 0:
     * any free one). A wildcard host (0.0.0.0) listens everywhere and advertises this
     * machine's host name.
     */
    public static EmbeddedKafka start(Path dataDir, String listen) throws IOException {
        return start(dataDir, listen, EmbeddedAuth.NONE);
    }

    /**
     * {@link #start(Path, String)}, the client listener requiring {@code auth}. Refused (before
     * anything starts) when the listener is beyond loopback and {@code auth} requires nothing.
     */
    public static EmbeddedKafka start(Path dataDir, String listen, EmbeddedAuth auth) throws IOException {
        HostPort hp = HostPort.parse(listen, "--listen");
        if (!auth.required() && !hp.loopbackOnly()) {
            throw new IllegalArgumentException("--listen " + listen + " is beyond loopback, where the embedded broker requires"
                    + " SASL: set " + EmbeddedAuth.USERS_FILE_KEY + "=PATH (an owner-only file of NAME:PASSWORD lines)");
        }
        io.ferry.model.OwnerOnly.createDirectories(dataDir);
        Path lockFile = dataDir.resolveSibling(dataDir.getFileName() + ".lock");
        java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(lockFile,
                java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.WRITE);
        try {
            if (ch.tryLock() == null) {
                throw new BusyException(dataDir);
            }
            EmbeddedKafka k = startLocked(dataDir, hp, auth);
            k.lockChannel = ch;
            return k;
        } catch (java.nio.channels.OverlappingFileLockException e) { // held by this very JVM
            ch.close();
            throw new BusyException(dataDir);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    /** {@link #start(Path)}, waiting up to {@code patience} for another process to let go. */
    public static EmbeddedKafka start(Path dataDir, java.time.Duration patience) throws IOException, InterruptedException {
        return start(dataDir, "127.0.0.1:0", patience);
    }

    /** {@link #start(Path, String)}, waiting up to {@code patience} for another process to let go. */
    public static EmbeddedKafka start(Path dataDir, String listen, java.time.Duration patience)
            throws IOException, InterruptedException {
        return start(dataDir, listen, EmbeddedAuth.NONE, patience);
    }

    /** {@link #start(Path, String, EmbeddedAuth)}, waiting up to {@code patience} for another process to let go. */
    public static EmbeddedKafka start(Path dataDir, String listen, EmbeddedAuth auth, java.time.Duration patience)
            throws IOException, InterruptedException {
        long deadline = System.nanoTime() + patience.toNanos();
        while (true) {
            try {
                return start(dataDir, listen, auth);
            } catch (BusyException busy) {
                if (System.nanoTime() > deadline) {
                    throw busy;
                }
                Thread.sleep(200);
            }
        }
    }

    private static EmbeddedKafka startLocked(Path dataDir, HostPort listen, EmbeddedAuth auth) throws IOException {
        int brokerPort = listen.port() == 0 ? freePort() : listen.port();
        int controllerPort = freePort();
        String advertised = listen.wildcard() ? java.net.InetAddress.getLocalHost().getHostName() : listen.host();
        String clientAddress = HostPort.bracket(advertised) + ":" + brokerPort;
        Map<String, Object> props = new HashMap<>();
        props.put("process.roles", "broker,controller");
        props.put("node.id", "1");
        props.put("controller.quorum.voters", "1@127.0.0.1:" + controllerPort);
        String localBootstrap = clientAddress;
        KafkaClientSettings localClient = KafkaClientSettings.NONE;
        if (!auth.required()) {
            props.put("listeners", "PLAINTEXT://" + listen.bracketedHost() + ":" + brokerPort + ",CONTROLLER://127.0.0.1:" + controllerPort);
            props.put("advertised.listeners", "PLAINTEXT://" + clientAddress);
            props.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
            props.put("inter.broker.listener.name", "PLAINTEXT");
        } else {
            int internalPort = freePort();
            localBootstrap = "127.0.0.1:" + internalPort;
            String internalPassword = randomPassword();
            localClient = new KafkaClientSettings(EmbeddedAuth.plainClient("SASL_PLAINTEXT", INTERNAL_USER, internalPassword));
            props.put("listeners", "CLIENT://" + listen.bracketedHost() + ":" + brokerPort + ",INTERNAL://" + localBootstrap
                    + ",CONTROLLER://127.0.0.1:" + controllerPort);
            props.put("advertised.listeners", "CLIENT://" + clientAddress + ",INTERNAL://" + localBootstrap);
            props.put("listener.security.protocol.map", "CLIENT:" + auth.protocol() + ",INTERNAL:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT");
            props.put("inter.broker.listener.name", "INTERNAL");
            props.put("sasl.enabled.mechanisms", "PLAIN");
            props.put("sasl.mechanism.inter.broker.protocol", "PLAIN");
            // the site's users on the client listener only; the internal user on the loopback one only
            props.put("listener.name.client.plain.sasl.jaas.config",
                    new org.apache.kafka.common.config.types.Password(EmbeddedAuth.plainServerJaas(auth.users(), null)));
            props.put("listener.name.internal.plain.sasl.jaas.config", new org.apache.kafka.common.config.types.Password(
                    EmbeddedAuth.plainServerJaas(Map.of(INTERNAL_USER, internalPassword), Map.entry(INTERNAL_USER, internalPassword))));
            auth.ssl().forEach((k, v) -> props.put("listener.name.client." + k, v));
        }
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
        return new EmbeddedKafka(server, clientAddress, localBootstrap, localClient);
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

    private static String randomPassword() {
        byte[] b = new byte[24];
        new java.security.SecureRandom().nextBytes(b);
        return java.util.HexFormat.of().formatHex(b);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    @Override
    public void close() {
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
