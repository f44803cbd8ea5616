package io.ferry.eventlog;

import io.ferry.model.Event;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The embedded broker's client listener with a keystore: SASL_SSL, against clients that trust it or not. */
class EmbeddedKafkaTlsIT {
    @TempDir
    Path tmp;

    @Test
    void aKeystoreMakesTheListenerSaslSslAndClientsMustTrustIt() throws Exception {
        Path keystore = tmp.resolve("broker.p12");
        Path cert = tmp.resolve("broker.crt");
        Path truststore = tmp.resolve("trust.p12");
        keytool("-genkeypair", "-alias", "broker", "-keyalg", "EC", "-groupname", "secp256r1", "-validity", "2",
                "-dname", "CN=localhost", "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-storetype", "PKCS12",
                "-keystore", keystore.toString(), "-storepass", "store-pw", "-keypass", "store-pw");
        keytool("-exportcert", "-alias", "broker", "-keystore", keystore.toString(), "-storepass", "store-pw",
                "-file", cert.toString());
        keytool("-importcert", "-noprompt", "-alias", "broker", "-file", cert.toString(), "-storetype", "PKCS12",
                "-keystore", truststore.toString(), "-storepass", "trust-pw");
        EmbeddedAuth auth = new EmbeddedAuth(Map.of("agent", "right-password"), Map.of("ssl.keystore.location",
                keystore.toString(), "ssl.keystore.password", "store-pw", "ssl.key.password", "store-pw",
                "ssl.keystore.type", "PKCS12"));
        assertEquals("SASL_SSL", auth.protocol());
        try (EmbeddedKafka broker = EmbeddedKafka.start(tmp.resolve("kafka"),
                EmbeddedKafka.Options.defaults().auth(auth))) {
            Map<String, String> client = new HashMap<>(EmbeddedAuth.plainClient("SASL_SSL", "agent", "right-password"));
            client.put("default.api.timeout.ms", "5000");
            client.put("request.timeout.ms", "4000");
            // the JVM's default trust: not this broker's certificate
            Map<String, String> untrusting = new HashMap<>(client);
            client.put("ssl.truststore.location", truststore.toString());
            client.put("ssl.truststore.password", "trust-pw");
            client.put("ssl.truststore.type", "PKCS12");
            try (KafkaLog log = new KafkaLog(broker.bootstrapServers(), new KafkaClientSettings(client),
                    LogSettings.EMBEDDED)) {
                log.append(new Event.Heartbeat("tls-job", "n1"));
            }
            IOException e = assertThrows(IOException.class, () -> new KafkaLog(broker.bootstrapServers(),
                    new KafkaClientSettings(untrusting), LogSettings.EMBEDDED));
            assertTrue(e.getMessage().contains("refused Ferry") && e.getMessage().contains("SSL handshake failed"),
                    e.getMessage());
            // the broker's own clients need none of the site's trust: the internal listener is on loopback
            try (KafkaLog local = new KafkaLog(broker.localBootstrapServers(), broker.localClient(),
                    LogSettings.EMBEDDED)) {
                local.append(new Event.Heartbeat("tls-job", "n0"));
            }
        }
    }

    private static void keytool(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(
                List.of(Path.of(System.getProperty("java.home"), "bin", "keytool").toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0, "keytool " + args[0] + ": " + out);
    }
}
