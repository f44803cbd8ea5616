package io.ferry.coordinator;

import io.ferry.eventlog.EmbeddedAuth;
import io.ferry.eventlog.EmbeddedKafka;
import io.ferry.eventlog.KafkaClientSettings;
import io.ferry.eventlog.KafkaLog;
import io.ferry.eventlog.LogSettings;
import io.ferry.eventlog.LoopbackLogin;
import io.ferry.eventlog.RequestTopics;
import io.ferry.model.Command;
import io.ferry.model.Event;
import io.ferry.model.EventCodec;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Jobs have owners on an embedded broker whose users file names operators: a user login writes
 * only its own request topic (the broker refuses the rest), the coordinator relays what it asks
 * stamped with the login, and only the login that started a job, or an operator, controls it.
 * Real broker with Kafka's ACLs, real coordinator, real clients logged in as each user.
 */
class JobOwnersIT {
    private static final Map<String, String> USERS = Map.of("alice", "alice-password-1", "bob", "bob-password-22",
            "agents", "agents-password-333");

    @TempDir
    Path tmp;

    @Test
    void onlyTheSubmittingLoginOrAnOperatorControlsAJob() throws Exception {
        EmbeddedAuth auth = new EmbeddedAuth(USERS, Map.of()).operatedBy(Set.of("agents"));
        try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"),
                EmbeddedKafka.Options.defaults().auth(auth));
             KafkaLog service = new KafkaLog(kafka.bootstrapServers()); // the broker's own user: an operator
             Coordinator coordinator = new Coordinator(service, Clock.systemUTC()).start();
             KafkaLog alice = login(kafka, "alice");
             KafkaLog bob = login(kafka, "bob");
             KafkaLog agents = login(kafka, "agents");
             KafkaConsumer<byte[], byte[]> events = service.reader(KafkaLog.EVENTS, true);
             KafkaConsumer<byte[], byte[]> deadLetters = service.reader(KafkaLog.DEAD_LETTER, true)) {
            assertTrue(coordinator.awaitLive(Duration.ofSeconds(60)));

            // The broker itself refuses a user's write to Ferry's own topics: no header or field can forge a request.
            ExecutionException direct = assertThrows(ExecutionException.class, () -> rawWrite(kafka, "bob",
                    KafkaLog.EVENTS,
                    "a", EventCodec.encode(new Event.JobStarted("a", 2, 1000, true, "file:///s", "n1"))));
            assertInstanceOf(TopicAuthorizationException.class, direct.getCause());

            // alice starts job "a": relayed, and the job is hers.
            alice.append(new Event.JobStarted("a", 2, 60_000, true, "file:///s", "n1"));
            agents.append(new Event.JobStarted("ops", 1, 60_000, true, "file:///s", "n2")); // an operator's own job
            List<Event> seen = new ArrayList<>();
            await(events, seen, e -> e instanceof Event.JobStarted s && s.job().equals("ops"));
            await(events, seen, e -> e instanceof Event.JobStarted s && s.job().equals("a"));
            awaitOwner(coordinator, "a", "alice");

            // bob may not take job "a" over, nor halt it, nor halt the operators' job; alice halts her own.
            bob.append(new Event.JobStarted("a", 3, 60_000, true, "file:///s", "n9"));
            bob.send(KafkaLog.COORDINATOR, new Command.Halt("a", System.currentTimeMillis() + 600_000, "bob's halt"));
            long deadline = System.currentTimeMillis() + 600_000;
            alice.send(KafkaLog.COORDINATOR, new Command.Halt("ops", deadline, "alice's halt"));
            alice.send(KafkaLog.COORDINATOR, new Command.Halt("a", deadline, "alice's halt"));
            agents.send(KafkaLog.COORDINATOR, new Command.Halt("ops", deadline, "operator"));
            await(events, seen, e -> e instanceof Event.HaltRequested h && h.job().equals("ops"));
            await(events, seen, e -> e instanceof Event.HaltRequested h && h.job().equals("a"));
            // bob's JobStarted was relayed (it is in the log, stamped) but never folded: the job is alice's, 2 ranks.
            await(events, seen, e -> e instanceof Event.JobStarted s && s.job().equals("a") && s.ranks() == 3);
            assertEquals(2, (int) coordinator.query(j -> j.get("a").orElseThrow().ranks()));
            awaitOwner(coordinator, "a", "alice");

            // What only operators write never reaches Ferry's topics from a user: an agent's report, a node's command.
            bob.append(new Event.ImageCaptured("a", 1, 0, "n1", 10, 0.1, 10));
            bob.send("n1", new Command.Release("a"));
            // Parked: bob's JobStarted (by the fold), his halt and alice's halt of "ops" (by the orders), his
            // capture and his command to a node (by the relay). All five there: every request has been handled.
            List<String> parked = new ArrayList<>();
            awaitDeadLetters(deadLetters, parked, 5);
            var ends = KafkaLog.ends(events);
            while (!KafkaLog.reached(events, ends)) {
                events.poll(Duration.ofMillis(200)).forEach(r -> seen.add(EventCodec.decode(r.value())));
            }
            Set<String> halts = new TreeSet<>(seen.stream().filter(e -> e instanceof Event.HaltRequested)
                    .map(e -> ((Event.HaltRequested) e).job() + ":" + ((Event.HaltRequested) e).why()).toList());
            assertEquals(Set.of("ops:operator", "a:alice's halt"), halts, "only the halts of the jobs' owners");
            assertTrue(seen.stream().noneMatch(e -> e instanceof Event.ImageCaptured),
                    "a user's forged capture: " + seen);
            assertEquals(2, (int) coordinator.query(j -> j.get("a").orElseThrow().ranks()));
        }
    }

    @Test
    void theRequestTopicsFollowTheUsersFileAtEachStart() throws Exception {
        Path data = tmp.resolve("kafka");
        EmbeddedAuth everyone = new EmbeddedAuth(USERS, Map.of());
        try (EmbeddedKafka kafka = EmbeddedKafka.start(data,
                EmbeddedKafka.Options.defaults().auth(everyone.operatedBy(Set.of("agents"))));
             KafkaLog agents = login(kafka, "agents"); KafkaLog alice = login(kafka, "alice")) { // topics made first
            assertEquals("alice", alice.requester());
            assertEquals(null, agents.requester(), "an operator writes Ferry's topics itself");
        }
        // bob removed from the file: his request topic goes, and with it his rights
        Map<String, String> withoutBob = new HashMap<>(USERS);
        withoutBob.remove("bob");
        try (EmbeddedKafka kafka = EmbeddedKafka.start(data, EmbeddedKafka.Options.defaults()
                .auth(new EmbeddedAuth(withoutBob, Map.of()).operatedBy(Set.of("agents"))));
             KafkaLog service = new KafkaLog(kafka.bootstrapServers());
             KafkaConsumer<byte[], byte[]> c = service.reader(KafkaLog.EVENTS, false)) {
            assertEquals(Set.of(RequestTopics.of("alice")), requestTopics(c));
            try (Admin admin = Admin.create(
                    LoopbackLogin.clientConfig(kafka.bootstrapServers(),
                            Map.of("bootstrap.servers", kafka.bootstrapServers())))) {
                var topic = new ConfigResource(
                        ConfigResource.Type.TOPIC, RequestTopics.of("alice"));
                var configs = admin.describeConfigs(List.of(topic)).all()
                        .get(30, TimeUnit.SECONDS);
                assertEquals("1", configs.get(topic).get("flush.messages").value(),
                        "an acknowledged request survives a power cut");
            }
        }
        // no operators named any more: every login writes Ferry's topics, as before owners
        try (EmbeddedKafka kafka = EmbeddedKafka.start(data, EmbeddedKafka.Options.defaults().auth(everyone));
             KafkaLog alice = login(kafka, "alice");
             KafkaConsumer<byte[], byte[]> c = alice.reader(KafkaLog.EVENTS, false)) {
            assertEquals(null, alice.requester());
            assertEquals(Set.of(), requestTopics(c));
            alice.append(new Event.JobStarted("direct", 1, 1000, true, "file:///s", "n1"));
        }
    }

    private static Set<String> requestTopics(KafkaConsumer<byte[], byte[]> c) {
        Set<String> found = new TreeSet<>(c.listTopics(Duration.ofSeconds(30)).keySet());
        found.removeIf(t -> !RequestTopics.ALL.matcher(t).matches());
        return found;
    }

    private static KafkaLog login(EmbeddedKafka kafka, String user) throws Exception {
        return new KafkaLog(kafka.bootstrapServers(), client(user), LogSettings.EMBEDDED);
    }

    private static KafkaClientSettings client(String user) {
        return new KafkaClientSettings(Map.of("security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "PLAIN",
                "sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required username=\""
                        + user + "\" password=\"" + USERS.get(user) + "\";"));
    }

    private static void rawWrite(EmbeddedKafka kafka, String user, String topic, String key, byte[] value)
            throws Exception {
        Map<String, Object> config = new HashMap<>(client(user).settings());
        config.putAll(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ProducerConfig.MAX_BLOCK_MS_CONFIG, "10000", ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "10000",
                ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000"));
        try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(config, new ByteArraySerializer(),
                new ByteArraySerializer())) {
            p.send(new ProducerRecord<>(topic, key.getBytes(StandardCharsets.UTF_8), value)).get();
        }
    }

    /** Reads {@code events} into {@code seen} until one matches (30 s at most). */
    private static void await(KafkaConsumer<byte[], byte[]> events, List<Event> seen, Predicate<Event> wanted) {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (seen.stream().noneMatch(wanted)) {
            assertTrue(System.nanoTime() < deadline, "not in the events topic within 30 s; read " + seen);
            for (ConsumerRecord<byte[], byte[]> r : events.poll(Duration.ofMillis(200))) {
                seen.add(EventCodec.decode(r.value()));
            }
        }
    }

    private static void awaitDeadLetters(KafkaConsumer<byte[], byte[]> c, List<String> parked, int n) {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (parked.size() < n) {
            assertTrue(System.nanoTime() < deadline, "fewer than " + n + " parked within 30 s: " + parked);
            for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                parked.add(new String(r.key(), StandardCharsets.UTF_8));
            }
        }
    }

    private static void awaitOwner(Coordinator c, String job, String owner) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!owner.equals(c.query(j -> j.get(job).map(v -> v.owner).orElse(null)))) {
            assertTrue(System.nanoTime() < deadline, job + " is not " + owner + "'s within 30 s");
            Thread.sleep(50);
        }
        assertTrue(RequestTopics.ALL.matcher(RequestTopics.of(owner)).matches());
    }
}
