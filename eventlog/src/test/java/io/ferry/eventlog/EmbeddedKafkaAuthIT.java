package io.ferry.eventlog;

import io.ferry.model.Event;
import io.ferry.model.EventCodec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The embedded broker with SASL/PLAIN required on its client listener, against real clients. */
class EmbeddedKafkaAuthIT {
    @TempDir
    static Path tmp;
    private static EmbeddedKafka broker;

    @BeforeAll
    static void start() throws IOException, InterruptedException {
        broker = EmbeddedKafka.start(tmp.resolve("kafka"), EmbeddedKafka.Options.defaults()
                .auth(new EmbeddedAuth(Map.of("agent", "right-password", "ops", "other"), Map.of())));
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static KafkaClientSettings login(String user, String password) {
        // a short admin timeout bounds the wait of a client the broker drops
        Map<String, String> s = new HashMap<>(EmbeddedAuth.plainClient("SASL_PLAINTEXT", user, password));
        s.put("default.api.timeout.ms", "5000");
        s.put("request.timeout.ms", "4000");
        return new KafkaClientSettings(s);
    }

    @Test
    void aClientWithTheRightPasswordAppendsAndReadsThroughKafkaLog() throws Exception {
        try (KafkaLog log = new KafkaLog(broker.bootstrapServers(), login("agent", "right-password"),
                LogSettings.EMBEDDED);
             KafkaConsumer<byte[], byte[]> c = log.reader(KafkaLog.HEARTBEATS, false)) {
            log.append(new Event.Heartbeat("secured-job", "n1"));
            List<Event> read = new ArrayList<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (read.isEmpty() && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    read.add(EventCodec.decode(r.value()));
                }
            }
            assertEquals(List.of(new Event.Heartbeat("secured-job", "n1")), read);
        }
    }

    @Test
    void aClientWithAWrongPasswordIsRefusedWithTheBrokersReason() {
        IOException e = assertThrows(IOException.class,
                () -> new KafkaLog(broker.bootstrapServers(), login("agent", "wrong-password"), LogSettings.EMBEDDED));
        assertTrue(e.getMessage().contains("refused Ferry") && e.getMessage().contains("Authentication failed"),
                e.getMessage());
        assertFalse(e.getMessage().contains("wrong-password"), e.getMessage());
        assertThrows(IOException.class,
                () -> new KafkaLog(broker.bootstrapServers(), login("nobody", "right-password"), LogSettings.EMBEDDED));
    }

    @Test
    void aClientWithoutSaslIsDroppedAndToldWhatToCheck() {
        IOException e = assertThrows(IOException.class, () -> new KafkaLog(broker.bootstrapServers(),
                new KafkaClientSettings(Map.of("security.protocol", "PLAINTEXT", "default.api.timeout.ms", "5000",
                        "request.timeout.ms", "4000")), LogSettings.EMBEDDED));
        assertTrue(e.getMessage().contains("did not answer") && e.getMessage().contains("kafka.security.protocol"),
                e.getMessage());
    }

    @Test
    void settingsKafkaChecksOnlyTogetherFailAtStartNamingTheKeys() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new KafkaLog(broker.bootstrapServers(),
                new KafkaClientSettings(Map.of("default.api.timeout.ms", "1000")), LogSettings.EMBEDDED));
        assertTrue(e.getMessage().contains("default.api.timeout.ms"), e.getMessage());
    }

    @Test
    void theBrokersOwnClientsUseTheInternalLoopbackListener() throws Exception {
        assertTrue(broker.localBootstrapServers().startsWith("127.0.0.1:"));
        assertFalse(broker.localBootstrapServers().equals(broker.bootstrapServers()));
        try (KafkaLog log = new KafkaLog(broker.localBootstrapServers(), broker.localClient(), LogSettings.EMBEDDED)) {
            log.append(new Event.Heartbeat("internal", "n0"));
        }
        // the site's users cannot log in on the internal listener, nor the internal user on the client one
        assertThrows(IOException.class,
                () -> new KafkaLog(broker.localBootstrapServers(), login("agent", "right-password"),
                        LogSettings.EMBEDDED));
        Map<String, String> internal = new HashMap<>(broker.localClient().settings());
        internal.put("default.api.timeout.ms", "5000");
        internal.put("request.timeout.ms", "4000");
        assertThrows(IOException.class, () -> new KafkaLog(broker.bootstrapServers(), new KafkaClientSettings(internal),
                LogSettings.EMBEDDED));
    }
}
