package io.ferry.eventlog;

import io.ferry.model.Event;
import io.ferry.model.OwnerOnly;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The embedded broker on loopback requires a login: its own user's, found in that user's
 * runtime directory; a client without it (another local user, who cannot read the file) is
 * dropped, on the client listener and on the controller listener alike.
 */
class LoopbackLoginIT {
    @TempDir
    Path tmp;

    private static final ConfigResource EVENTS = new ConfigResource(ConfigResource.Type.TOPIC, KafkaLog.EVENTS);
    private static final Map<String, String> SHORT = Map.of("default.api.timeout.ms", "5000",
            "request.timeout.ms", "4000");

    @Test
    void theBrokersOwnUserLogsInFromItsFileAndNobodyElseGetsIn() throws Exception {
        KafkaClientSettings before;
        try (EmbeddedKafka k = EmbeddedKafka.start(tmp.resolve("kafka"))) {
            int port = HostPort.parse(k.bootstrapServers(), "test").port();
            Path file = runtimeDir().resolve("kafka-" + port + ".login");
            assertTrue(Files.isRegularFile(file), "the login is left in the user's runtime directory: " + file);
            assertEquals("rw-------", PosixFilePermissions.toString(
                    Files.getPosixFilePermissions(file)));
            assertTrue(k.login().secured());
            before = k.login();

            // the same user, no settings of its own: logs in from the file, appends
            try (KafkaLog log = new KafkaLog(k.bootstrapServers(), new KafkaClientSettings(SHORT),
                    LogSettings.EMBEDDED)) {
                log.append(new Event.Heartbeat("loopback-job", "n1"));
            }

            // a client that speaks plaintext, as every client could before: dropped
            Map<String, String> plain = new HashMap<>(SHORT);
            plain.put("security.protocol", "PLAINTEXT");
            IOException dropped = assertThrows(IOException.class, () -> new KafkaLog(k.bootstrapServers(),
                    new KafkaClientSettings(plain), LogSettings.EMBEDDED));
            assertTrue(dropped.getMessage().contains("did not answer"), dropped.getMessage());

            // a wrong password for the loopback user (a guess): refused with the broker's reason
            Map<String, String> guess = new HashMap<>(EmbeddedAuth.plainClient("SASL_PLAINTEXT", LoopbackLogin.USER,
                    "guess"));
            guess.putAll(SHORT);
            IOException refused = assertThrows(IOException.class, () -> new KafkaLog(k.bootstrapServers(),
                    new KafkaClientSettings(guess), LogSettings.EMBEDDED));
            assertTrue(refused.getMessage().contains("Authentication failed"), refused.getMessage());

            // the controller listener: an admin client speaking to it directly (bootstrap.controllers) could set the
            // events topic's retention to a second, without any login, before the listener required one
            Map<String, Object> direct = new HashMap<>(SHORT);
            direct.put(AdminClientConfig.BOOTSTRAP_CONTROLLERS_CONFIG, k.controllerAddress());
            try (Admin admin = Admin.create(direct)) {
                assertThrows(Exception.class, () -> admin.incrementalAlterConfigs(Map.of(EVENTS, List.of(
                        new AlterConfigOp(new ConfigEntry("retention.ms", "1000"), AlterConfigOp.OpType.SET))))
                        .all().get(20, TimeUnit.SECONDS));
            }

            // another user finds no file of theirs (here: the file gone): the broker drops the client
            for (Path dir : LoopbackLogin.candidates(System.getenv())) { // the session's directory and /tmp's
                Files.deleteIfExists(dir.resolve(file.getFileName()));
            }
            IOException noFile = assertThrows(IOException.class, () -> new KafkaLog(k.bootstrapServers(),
                    new KafkaClientSettings(SHORT), LogSettings.EMBEDDED));
            assertTrue(noFile.getMessage().contains("did not answer"), noFile.getMessage());
        }
        try (EmbeddedKafka k = EmbeddedKafka.start(tmp.resolve("kafka"));
             Admin admin = EmbeddedKafkaIT.admin(k)) {
            assertEquals(before, k.login(), "the login outlives a restart: agents logged in before it log in after it");
            assertEquals("-1", admin.describeConfigs(List.of(EVENTS)).all().get(30, TimeUnit.SECONDS).get(EVENTS)
                    .get("retention.ms").value(), "the events topic keeps its retention");
        }
    }

    /** This user's runtime directory, where the broker leaves its login. */
    private static Path runtimeDir() throws IOException {
        return OwnerOnly.privateRuntimeDir(System.getenv());
    }
}
