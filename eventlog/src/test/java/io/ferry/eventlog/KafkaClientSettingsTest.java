package io.ferry.eventlog;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class KafkaClientSettingsTest {
    private static final String JAAS = "org.apache.kafka.common.security.plain.PlainLoginModule required"
            + " username=\"alice\" password=\"s3cret-pw\";";

    @Test
    void aKeyNoKafkaClientDefinesIsRefusedNamingIt() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new KafkaClientSettings(Map.of("sasl.mechanisms", "PLAIN")));
        assertTrue(e.getMessage().contains("'sasl.mechanisms' is not a Kafka client configuration key"),
                e.getMessage());
    }

    @Test
    void aBadValueIsRefusedNamingTheKey() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new KafkaClientSettings(Map.of("security.protocol", "SASL_TLS")));
        assertTrue(e.getMessage().contains("security.protocol") && e.getMessage().contains("SASL_TLS"), e.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> new KafkaClientSettings(Map.of("request.timeout.ms", "soon")));
    }

    @Test
    void keysFerryDecidesCannotBePassedThrough() {
        for (String k : new String[]{"bootstrap.servers", "acks", "enable.idempotence", "isolation.level",
                "group.id"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> new KafkaClientSettings(Map.of(k, "x")), k);
            assertTrue(e.getMessage().contains("'" + k + "' is set by Ferry"), e.getMessage());
        }
    }

    @Test
    void aMalformedJaasConfigIsRefusedAtOnceWithoutShowingIt() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new KafkaClientSettings(
                Map.of("sasl.jaas.config",
                        "org.apache.kafka.common.security.plain.PlainLoginModule password=\"s3cret-pw\"")));
        assertTrue(e.getMessage().contains("sasl.jaas.config"), e.getMessage());
        assertFalse(e.getMessage().contains("s3cret-pw"), e.getMessage());
    }

    @Test
    void passwordTypedKeysAreSecretsAndTheRestAreNot() {
        assertTrue(KafkaClientSettings.isSecret("sasl.jaas.config"));
        assertTrue(KafkaClientSettings.isSecret("ssl.truststore.password"));
        assertTrue(KafkaClientSettings.isSecret("ssl.keystore.key"));
        assertFalse(KafkaClientSettings.isSecret("security.protocol"));
        assertFalse(KafkaClientSettings.isSecret("ssl.truststore.location"));
        assertFalse(KafkaClientSettings.isSecret("no.such.key"));
    }

    @Test
    void eachClientGetsOnlyTheKeysItsKindDefinesAndNeverShowsValues() {
        KafkaClientSettings s = new KafkaClientSettings(Map.of("security.protocol", "SASL_PLAINTEXT",
                "sasl.mechanism", "PLAIN", "sasl.jaas.config", JAAS, "linger.ms", "5", "fetch.min.bytes", "2"));
        Map<String, Object> producer = s.producer(Map.of("bootstrap.servers", "h:1"));
        assertEquals("SASL_PLAINTEXT", producer.get("security.protocol"));
        assertEquals(JAAS, producer.get("sasl.jaas.config"));
        assertEquals("5", producer.get("linger.ms"));
        assertFalse(producer.containsKey("fetch.min.bytes"));
        Map<String, Object> admin = s.admin(Map.of("bootstrap.servers", "h:1"));
        assertFalse(admin.containsKey("linger.ms"));
        assertEquals("PLAIN", admin.get("sasl.mechanism"));
        assertTrue(s.secured());
        assertFalse(s.toString().contains("s3cret-pw"), s.toString());
    }
}
