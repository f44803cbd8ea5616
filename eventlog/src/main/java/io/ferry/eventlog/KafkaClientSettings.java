package io.ferry.eventlog;

import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.types.Password;
import org.apache.kafka.common.security.JaasContext;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * Kafka client settings a site passes through to every producer, consumer and admin client
 * Ferry makes: {@code security.protocol}, {@code sasl.mechanism}, {@code sasl.jaas.config},
 * {@code ssl.truststore.location} and any other key Kafka's clients define (Ferry's
 * configuration names them {@code kafka.<key>}). Checked once, when made: a key no Kafka
 * client defines, a key Ferry sets itself and a bad value are refused naming the key, so a
 * typo fails at start-up instead of being ignored with a warning in a log. Each client gets
 * only the keys its own kind defines. Immutable and thread-safe.
 */
public record KafkaClientSettings(Map<String, String> settings) {
    /** No settings: plaintext, no authentication, as Kafka's defaults. */
    public static final KafkaClientSettings NONE = new KafkaClientSettings(Map.of());

    /**
     * Keys Ferry decides itself because its correctness depends on them (acks=all, idempotence,
     * read_committed, its own serialisation and positions), or that come from elsewhere
     * ({@code bootstrap.servers}: {@code --kafka}).
     */
    static final Set<String> RESERVED = Set.of(CommonKeys.BOOTSTRAP, ProducerConfig.ACKS_CONFIG,
            ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, ProducerConfig.TRANSACTIONAL_ID_CONFIG,
            ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
            ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
            ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, ConsumerConfig.ISOLATION_LEVEL_CONFIG,
            ConsumerConfig.GROUP_ID_CONFIG,
            ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG);

    private static final class CommonKeys {
        static final String BOOTSTRAP = "bootstrap.servers";
    }

    /**
     * Kafka's client definitions, built on first use only: building them loads and initialises much of
     * Kafka's client library, which a command that never meets a {@code kafka.*} key (a push) need not pay.
     */
    private static final class Defs {
        static final List<ConfigDef> ALL = List.of(ProducerConfig.configDef(), ConsumerConfig.configDef(),
                AdminClientConfig.configDef());
    }

    public KafkaClientSettings {
        settings = Map.copyOf(new TreeMap<>(settings));
        settings.forEach(KafkaClientSettings::check);
    }

    /** Whether some Kafka client defines {@code key} (without Ferry's {@code kafka.} prefix). */
    public static boolean knows(String key) {
        return definition(key).isPresent();
    }

    /**
     * Whether {@code key}'s value is a secret: Kafka declares it a password ({@code sasl.jaas.config},
     * {@code ssl.keystore.password}, {@code ssl.key.password}, {@code ssl.keystore.key}...).
     */
    public static boolean isSecret(String key) {
        return definition(key).map(k -> k.type == ConfigDef.Type.PASSWORD).orElse(false);
    }

    private static Optional<ConfigDef.ConfigKey> definition(String key) {
        for (ConfigDef d : Defs.ALL) {
            ConfigDef.ConfigKey k = d.configKeys().get(key);
            if (k != null) {
                return Optional.of(k);
            }
        }
        return Optional.empty();
    }

    private static void check(String key, String value) {
        if (RESERVED.contains(key)) {
            throw new IllegalArgumentException("Kafka client key '" + key + "' is set by Ferry"
                    + (key.equals(CommonKeys.BOOTSTRAP) ? " (give --kafka HOST:PORT)" : "")
                    + " and cannot be passed through");
        }
        ConfigDef.ConfigKey k = definition(key).orElseThrow(() -> new IllegalArgumentException(
                "'" + key + "' is not a Kafka client configuration key (producer, consumer or admin)"));
        try {
            Object parsed = ConfigDef.parseType(key, value, k.type);
            if (k.validator != null) {
                k.validator.ensureValid(key, parsed);
            }
        } catch (ConfigException e) {
            // Kafka's message names the key and hides a password's value
            throw new IllegalArgumentException(e.getMessage(), e);
        }
        if (key.equals(SaslConfigs.SASL_JAAS_CONFIG)) {
            try {
                // parsed at start-up, not at the first connection
                JaasContext.loadClientContext(Map.of(key,
                        new Password(value)));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("Kafka client key '" + key + "' is not a JAAS configuration: "
                        + e.getMessage(), e);
            }
        }
    }

    /** {@code base} (Ferry's own settings) with the pass-through keys a producer defines. */
    Map<String, Object> producer(Map<String, Object> base) {
        return merged(base, ProducerConfig.configNames());
    }

    /** {@code base} with the pass-through keys a consumer defines. */
    Map<String, Object> consumer(Map<String, Object> base) {
        return merged(base, ConsumerConfig.configNames());
    }

    /** {@code base} with the pass-through keys an admin client defines. */
    Map<String, Object> admin(Map<String, Object> base) {
        return merged(base, AdminClientConfig.configNames());
    }

    private Map<String, Object> merged(Map<String, Object> base, Set<String> known) {
        Map<String, Object> out = new HashMap<>(base);
        settings.forEach((k, v) -> {
            if (known.contains(k)) {
                out.put(k, v);
            }
        });
        return out;
    }

    /** Whether these settings authenticate or encrypt (anything but plaintext). */
    public boolean secured() {
        return !settings.getOrDefault("security.protocol", "PLAINTEXT").equalsIgnoreCase("PLAINTEXT");
    }

    /** Keys only: values may be secrets. */
    @Override
    public String toString() {
        return "KafkaClientSettings" + settings.keySet();
    }
}
