package io.ferry.eventlog;

import io.ferry.model.Command;
import io.ferry.model.Event;
import io.ferry.model.EventCodec;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.io.Closeable;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.ToLongFunction;

/**
 * Ferry's topics on a Kafka cluster: {@code ferry.events} (keyed by job), {@code
 * ferry.commands} (keyed by node, or "coordinator"), {@code ferry.state} (compacted, keyed by
 * job), {@code ferry.deadletter} and {@code ferry.heartbeats} (keyed by job). Events, commands
 * and dead letters are kept forever ({@code retention.ms=-1}): the coordinator's state is a fold
 * over the whole log. Heartbeats are kept for {@link #HEARTBEAT_RETENTION}: they are read live,
 * never folded from history. Appends wait for acks=all, so an event is in the log before
 * anyone acts on it. Thread-safe.
 */
public final class KafkaLog implements Closeable {
    public static final String EVENTS = "ferry.events";
    public static final String COMMANDS = "ferry.commands";
    public static final String STATE = "ferry.state";
    public static final String DEAD_LETTER = "ferry.deadletter";
    /**
     * What is true only while it is fresh, keyed by job: heartbeats of agents and launchers, and
     * the nodes' staging progress. Read live by coordinators (for liveness, and the forecasts a
     * generation gets again as it is staged), never replayed (a heartbeat says only that its
     * sender was alive when it arrived; a progress report is stale once its generation is staged,
     * and was 84% of a long job's history), so kept for {@link #HEARTBEAT_RETENTION} only, not for
     * ever in the events topic.
     */
    public static final String HEARTBEATS = "ferry.heartbeats";
    /**
     * Coordinators' snapshots of their folded state, one per events partition (compacted, one
     * partition): a start loads the newest and replays only the events after it. Derived: a
     * snapshot lost or refused costs a longer start, never an event.
     */
    public static final String SNAPSHOTS = "ferry.snapshots";
    /**
     * How long {@link #HEARTBEATS} keeps a heartbeat ({@code retention.ms}): an hour, 120 times
     * the default {@code --heartbeat-timeout} (30 s) and several times any timeout a site would
     * set. A coordinator reads heartbeats from its start on and judges them by when it reads
     * them, so none older than its timeout is ever needed; the hour is what an operator may look
     * at with {@code kafka-console-consumer}, and what a reader that fell behind may still catch
     * up on. At 1,000 nodes (one heartbeat each every 5 s, about 100 bytes) that is about 70 MB.
     */
    public static final Duration HEARTBEAT_RETENTION = Duration.ofHours(1);
    /**
     * How often {@link #HEARTBEATS} starts a new segment ({@code segment.ms}): Kafka deletes only
     * whole segments, and by default rolls one after 7 days (or 1 GiB), which would keep a week
     * of heartbeats whatever the retention.
     */
    public static final Duration HEARTBEAT_SEGMENT = Duration.ofMinutes(10);
    public static final String COORDINATOR = "coordinator";
    /** Largest record Ferry writes or reads ({@link io.ferry.model.EventCodec#MAX_BYTES}). */
    public static final int MAX_RECORD_BYTES = EventCodec.MAX_BYTES;

    private final String bootstrap;
    private final KafkaClientSettings client;
    private final KafkaProducer<byte[], byte[]> producer;
    private final Map<String, Integer> partitions = new HashMap<>();
    private final LogProbe probe = new LogProbe(this::admin);
    private final LogReaders readers;
    /**
     * What is wrong with the retention of topics found already there (made by a site, or by hand): see
     * {@link #retentionProblems}.
     */
    private List<String> retentionProblems = List.of();
    private TopicRetention.Loss eventLoss = new TopicRetention.Loss(List.of(), List.of());
    /** This login's request topic, which it writes through ({@link RequestTopics}); null: it writes Ferry's topics. */
    private String requests;

    /** Connects to an external cluster with {@link LogSettings#EXTERNAL} and {@link KafkaClientSettings#NONE}. */
    public KafkaLog(String bootstrap) throws IOException {
        this(bootstrap, KafkaClientSettings.NONE, LogSettings.EXTERNAL);
    }

    /**
     * Connects every producer, consumer and admin client with {@code client}'s settings (TLS,
     * SASL) added to Ferry's own. A broker that refuses them fails this constructor: at once
     * with the broker's reason for bad credentials, after the admin client's timeout (30 s,
     * {@code default.api.timeout.ms} when shorter) for a protocol the broker does not speak.
     */
    public KafkaLog(String bootstrap, KafkaClientSettings client, LogSettings settings) throws IOException {
        this.bootstrap = bootstrap;
        this.client = LoopbackLogin.addedTo(bootstrap, client);
        this.readers = new LogReaders(bootstrap, this.client);
        ensureTopics(settings);
        this.producer = new KafkaProducer<>(this.client.producer(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true",
                ProducerConfig.LINGER_MS_CONFIG, "0", ProducerConfig.MAX_BLOCK_MS_CONFIG, "30000",
                ProducerConfig.MAX_REQUEST_SIZE_CONFIG, Integer.toString(MAX_RECORD_BYTES))),
                new ByteArraySerializer(), new ByteArraySerializer());
        for (String t : List.of(EVENTS, COMMANDS, STATE, DEAD_LETTER, HEARTBEATS)) {
            partitions.put(t, producer.partitionsFor(t).size());
        }
    }

    public String bootstrapServers() {
        return bootstrap;
    }

    private void ensureTopics(LogSettings settings) throws IOException {
        try (Admin admin = admin()) {
            TopicSetup.Checked checked = TopicSetup.ensure(admin, settings, bootstrap);
            eventLoss = checked.eventLoss();
            retentionProblems = checked.all();
            requests = RequestTopics.routeFor(checked.existing(), client); // request topics are never made here
        } catch (ExecutionException e) {
            if (e.getCause() instanceof AuthenticationException
                    || e.getCause() instanceof AuthorizationException) {
                throw new IOException("Kafka at " + bootstrap + " refused Ferry: " + e.getCause().getMessage()
                        + " (see kafka.sasl.jaas.config)", e);
            }
            throw new IOException("Kafka at " + bootstrap + " did not answer: " + e.getCause().getMessage() + hint(),
                    e);
        } catch (InterruptedException | TimeoutException e) {
            throw new IOException("Kafka at " + bootstrap + " did not answer: " + e + hint(), e);
        }
    }

    /**
     * Whether the cluster answers a metadata request within {@code timeout}: a probe of whether the
     * log is there at all (an empty poll cannot tell). Thread-safe; blocks up to {@code timeout}.
     */
    public boolean answers(Duration timeout) {
        return probe.answers(timeout);
    }

    /**
     * What is wrong with the retention of Ferry's topics that were already there (a site's, or
     * made by hand), each said once on standard error at connection: the {@link #eventRetention} and
     * {@link #eventCompaction} of the events topic, and a heartbeats topic that keeps its
     * heartbeats for ever (disk only).
     * Empty when Ferry made the topics, or they were made as Ferry makes them.
     */
    public List<String> retentionProblems() {
        return retentionProblems;
    }

    /**
     * The events topic's finite retention (by time or size), found when it was already there: a
     * coordinator starts on it only while its snapshots cover what it deleted. Empty: none, or a
     * login that may not read topic configurations (said at connection).
     */
    public List<String> eventRetention() {
        return eventLoss.retention();
    }

    /**
     * The events topic's compaction, found when it was already there: nothing covers what it drops (it keeps one per
     * job).
     */
    public List<String> eventCompaction() {
        return eventLoss.compaction();
    }

    /**
     * An admin client. Kafka checks some settings only against each other, when a client is made
     * ({@code default.api.timeout.ms} below {@code request.timeout.ms}): that failure is the
     * caller's configuration, said as such.
     */
    private Admin admin() {
        try {
            return Admin.create(client.admin(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap)));
        } catch (KafkaException e) {
            Throwable why = e.getCause() != null ? e.getCause() : e;
            throw new IllegalArgumentException("cannot make a Kafka client with the kafka.* settings "
                    + client.settings().keySet() + ": " + why.getMessage(), e);
        }
    }

    /** Why a broker may not answer: it drops clients that do not speak its listener's protocol, without a word. */
    private String hint() {
        return client.secured() ? ""
                : " (a broker that requires SASL or TLS drops clients without them: see kafka.security.protocol)";
    }

    /**
     * Appends an event durably (acks=all) and returns once it is in the log; logs its line ({@link
     * EventLines}). A heartbeat or staging progress goes to {@link #HEARTBEATS}, every other event to {@link #EVENTS}.
     */
    public void append(Event e) {
        send(topicOf(e), e.job(), EventCodec.encode(e));
        EventLines.log(e);
    }

    /**
     * The topic {@code e} belongs in: heartbeats and staging progress expire, the rest is the coordinator's history.
     */
    public static String topicOf(Event e) {
        return live(e) ? HEARTBEATS : EVENTS;
    }

    /**
     * Whether {@code e} is read live only, never replayed: a heartbeat or a node's staging progress
     * ({@link #HEARTBEATS}).
     */
    public static boolean live(Event e) {
        return e instanceof Event.Heartbeat || e instanceof Event.StagingProgress || e instanceof Event.AgentPresent;
    }

    /**
     * Appends an event that must not be lost to a broker outage (what a node reports: a rank's
     * exit, a capture, a staged image): returns once it is in the log, waiting out an outage of
     * any length until {@code giveUp} says so, and then throws as {@link #append} does. The record
     * is sent once and waited for as long as the producer keeps it (its delivery timeout); only a
     * record the producer gave up on is sent again, so an outage does not duplicate events (the
     * fold takes a duplicate as a no-op in any case). Says once on standard error that it waits.
     */
    public void appendPatiently(Event e, BooleanSupplier giveUp) {
        PatientAppend.append(producer, record(topicOf(e), e.job(), EventCodec.encode(e)), e, bootstrap, giveUp);
    }

    /**
     * Appends an event that is stale once late (a heartbeat) without waiting for it: the caller's
     * thread never stalls on a broker outage, and a failure is left to the next one.
     */
    public void offer(Event e) {
        producer.send(record(topicOf(e), e.job(), EventCodec.encode(e)));
        EventLines.log(e);
    }

    /** Sends a command to {@code node} (or {@link #COORDINATOR}) and returns once it is in the log. */
    public void send(String node, Command c) {
        send(COMMANDS, node, EventCodec.encode(c));
    }

    /**
     * Sends one command to each node of {@code commands} (in its iteration order) and returns
     * once every one of them is in the log: the sends are in flight together, so fanning a
     * command out to thousands of nodes costs about one round trip, not one per node.
     */
    public void sendAll(Map<String, ? extends Command> commands) {
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        for (Map.Entry<String, ? extends Command> c : commands.entrySet()) {
            sent.add(producer.send(record(COMMANDS, c.getKey(), EventCodec.encode(c.getValue()))));
        }
        for (Future<RecordMetadata> f : sent) {
            await(COMMANDS, f);
        }
    }

    /**
     * Publishes a derived, re-creatable record (the compacted state topic) without waiting for
     * it: a record lost to a broker failure is replaced by the next one for the same key. A
     * failure is reported on standard error.
     */
    public void publish(String topic, String key, byte[] value) {
        producer.send(new ProducerRecord<>(topic, key.getBytes(StandardCharsets.UTF_8), value), (md, e) -> {
            if (e != null) {
                System.err.println("ferry: cannot publish to " + topic + " on " + bootstrap + ": " + e.getMessage());
            }
        });
    }

    /** Sends {@code e} to its topic and waits for it: where it landed (partition, offset, the broker's timestamp). */
    RecordMetadata appendLocated(Event e) {
        Future<RecordMetadata> sent = producer.send(
                record(topicOf(e), e.job(), EventCodec.encode(e)));
        await(topicOf(e), sent);
        try {
            return sent.get();
        } catch (InterruptedException | ExecutionException done) { // it completed in await
            throw new IllegalStateException(done);
        }
    }

    /** Appends raw bytes to a topic: used by the dead-letter path and by tests that inject bad events. */
    public void sendRaw(String topic, String key, byte[] value) {
        send(topic, key, value);
    }

    private void send(String topic, String key, byte[] value) {
        await(topic, producer.send(record(topic, key, value)));
    }

    private volatile ToLongFunction<String> epochs = node -> -1;

    /**
     * Stamps every command sent from now on to a node with {@code epochOf(node)}, the newest epoch
     * of that node's agent this process heard ({@link EpochHeader}; none where it is -1): what a
     * coordinator does.
     */
    public void stampCommands(ToLongFunction<String> epochOf) {
        this.epochs = epochOf;
    }

    private ProducerRecord<byte[], byte[]> record(String topic, String key, byte[] value) {
        ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic, key.getBytes(StandardCharsets.UTF_8), value);
        if (topic.equals(COMMANDS) && !key.equals(COORDINATOR)) {
            EpochHeader.stamp(r, epochs.applyAsLong(key));
        }
        return RequestTopics.route(r, requests);
    }

    /** The login this client asks as, through its request topic ({@link RequestTopics}); null: an operator's. */
    public String requester() {
        return requests == null ? null : RequestTopics.loginOf(requests);
    }

    /** Sends a request of {@code login} on to {@code topic}, stamped with the login ({@link RequestTopics#by}). */
    public void relay(String topic, byte[] key, byte[] value, String login) {
        await(topic, producer.send(RequestTopics.relayed(topic, key, value, login)));
    }

    /** A reader of every login's request topic in consumer group {@code group}, from where the group left off. */
    public KafkaConsumer<byte[], byte[]> requestReader(String group) {
        return readers.requestReader(group);
    }

    private void await(String topic, Future<?> sent) {
        try {
            sent.get(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted appending to " + topic, e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("cannot append to " + topic + " on " + bootstrap + ": " + e.getMessage(),
                    e);
        }
    }

    /** A consumer of every partition of {@code topic}, positioned at its beginning or its end. */
    public KafkaConsumer<byte[], byte[]> reader(String topic, boolean fromBeginning) {
        return readers.reader(topic, fromBeginning);
    }

    /**
     * A consumer of the whole events topic, from its beginning, and of the heartbeats topic from its
     * end: a job's history, and who is heard from now on (what {@code ferry run} folds to see its
     * nodes answer). Records of the two topics come in no order between them.
     */
    public KafkaConsumer<byte[], byte[]> historyAndHeartbeats() {
        return readers.historyAndHeartbeats();
    }

    /**
     * A consumer of every partition of {@code topic} that resumes where the last reader of the same
     * {@code readerId} left off: at the offsets it committed ({@code commitAsync} after handling a
     * batch), else at the topic's end. A process started again under the same id so reads what was
     * written while it was down, at least once (what it handled after its last commit, again). No
     * group membership: the id only names the stored offsets.
     */
    public KafkaConsumer<byte[], byte[]> resumableReader(String topic, String readerId) {
        return readers.resumableReader(topic, readerId);
    }

    /**
     * A member of consumer group {@code group} reading {@code topic}: the group shares the topic's
     * partitions among its members (cooperatively: a rebalance moves only the partitions that
     * change hands), and a member silent for {@code sessionTimeout} loses its partitions to the
     * others. {@code listener} hears of each change; offsets are never committed (each owner
     * positions its partitions itself).
     *
     * <p>With a non-empty {@code instance}, the member is static (Kafka's {@code group.instance.id}):
     * the same instance started again after a crash takes its old place, and its partitions, at
     * once, instead of waiting {@code sessionTimeout} for its dead self to be dropped. A second live
     * member of the same instance fences the first ({@code FencedInstanceIdException} on its next
     * poll). Close such a reader with {@link #leaveGroup}, or its partitions wait for the timeout.
     */
    public KafkaConsumer<byte[], byte[]> groupReader(String topic, String group, String instance,
                                                     ConsumerRebalanceListener listener, Duration sessionTimeout) {
        return readers.groupReader(topic, group, instance, listener, sessionTimeout);
    }

    /**
     * Closes a {@link #groupReader} leaving its group, static member or not: its partitions go to
     * the group's other members at once (a static member would otherwise keep them for its session
     * timeout, waiting for its own return).
     */
    public static void leaveGroup(KafkaConsumer<byte[], byte[]> reader) {
        reader.close(CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP)
                .withTimeout(Duration.ofSeconds(5)));
    }

    /**
     * Closes a reader that commits nothing and belongs to no group ({@link #reader}, {@link #commandsFor},
     * {@link #historyAndHeartbeats}) without waiting for the fetch the broker holds for it: Kafka's close
     * waits for that fetch (up to its 500 ms wait when nothing is new) to end the fetch session, which the
     * broker otherwise evicts from its session cache in time (nothing is lost: such a reader has no position
     * to keep). Every command, agent and coordinator that stops closes one or two of these.
     */
    public static void closeNow(KafkaConsumer<byte[], byte[]> reader) {
        reader.close(CloseOptions.timeout(Duration.ZERO));
    }

    /**
     * A consumer of the one commands partition that carries {@code node}'s commands (the
     * producer's default partitioner: murmur2 of the key), at its end: an agent reads its own
     * partition, not every node's commands. Records of other nodes sharing it must be skipped.
     */
    public KafkaConsumer<byte[], byte[]> commandsFor(String node) {
        return readers.commandsFor(node, partitions.get(COMMANDS));
    }

    /** The end offset of every partition of {@code topic} now: a replay is caught up once it reaches them all. */
    public static Map<TopicPartition, Long> ends(KafkaConsumer<byte[], byte[]> c) {
        return c.endOffsets(c.assignment());
    }

    /** Whether {@code c} has read up to {@code ends} on every partition. */
    public static boolean reached(KafkaConsumer<byte[], byte[]> c, Map<TopicPartition, Long> ends) {
        for (Map.Entry<TopicPartition, Long> e : ends.entrySet()) {
            if (c.position(e.getKey()) < e.getValue()) {
                return false;
            }
        }
        return true;
    }

    /** A consumer assigned nothing yet, with Ferry's settings (for the classes of this package). */
    KafkaConsumer<byte[], byte[]> consumer() {
        return readers.consumer();
    }

    @Override
    public void close() {
        probe.close();
        producer.close();
    }
}
