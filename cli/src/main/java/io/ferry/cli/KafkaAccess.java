package io.ferry.cli;

import io.ferry.eventlog.EmbeddedAuth;
import io.ferry.eventlog.KafkaClientSettings;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * How a command reaches the event log: a Kafka cluster's {@code bootstrap} ({@code --kafka}; null:
 * the home's embedded broker), the client settings every Kafka client gets (the {@code kafka.*}
 * keys of the configuration: TLS, SASL), and who may use the embedded broker's listener
 * ({@code kafka.embedded.users-file}, {@code kafka.embedded.ssl.*}). Read once at start-up, so
 * a bad key, value or users file fails before anything starts.
 */
record KafkaAccess(String bootstrap, KafkaClientSettings client, EmbeddedAuth embedded) {
    static final String PREFIX = "kafka.";
    static final String EMBEDDED_SSL = EmbeddedAuth.SSL_PREFIX + "ssl.";

    /** The home's embedded broker, no client settings: what tests and the demo use. */
    static final KafkaAccess EMBEDDED = new KafkaAccess(null, KafkaClientSettings.NONE, EmbeddedAuth.NONE);

    /** Whether {@code key} is one of the {@code kafka.*} configuration keys. */
    static boolean knows(String key) {
        if (key.equals(EmbeddedAuth.USERS_FILE_KEY) || key.equals(EmbeddedAuth.OPERATORS_KEY)) {
            return true;
        }
        if (key.startsWith(EMBEDDED_SSL)) {
            return KafkaClientSettings.knows(key.substring(EmbeddedAuth.SSL_PREFIX.length()));
        }
        return key.startsWith(PREFIX) && !key.startsWith(EmbeddedAuth.SSL_PREFIX)
                && KafkaClientSettings.knows(key.substring(PREFIX.length()));
    }

    /** Whether {@code key}'s value is a secret: a Kafka password-typed key ({@code kafka.sasl.jaas.config}...). */
    static boolean isSecret(String key) {
        String k = key.startsWith(EMBEDDED_SSL) ? key.substring(EmbeddedAuth.SSL_PREFIX.length())
                : key.startsWith(PREFIX) ? key.substring(PREFIX.length()) : key;
        return knows(key) && KafkaClientSettings.isSecret(k);
    }

    /** Checks one value; the message names the key (never a secret's value). */
    static void check(String key, String value) {
        if (key.equals(EmbeddedAuth.USERS_FILE_KEY)) {
            if (value.isBlank()) {
                throw new IllegalArgumentException(key + " must name a file");
            }
        } else if (key.equals(EmbeddedAuth.OPERATORS_KEY)) {
            if (operators(value).isEmpty()) {
                throw new IllegalArgumentException(key + " must name at least one login of "
                        + EmbeddedAuth.USERS_FILE_KEY + " (comma-separated)");
            }
        } else if (key.startsWith(EMBEDDED_SSL)) {
            new KafkaClientSettings(Map.of(key.substring(EmbeddedAuth.SSL_PREFIX.length()), value));
        } else {
            new KafkaClientSettings(Map.of(key.substring(PREFIX.length()), value));
        }
    }

    /** The access of {@code bootstrap} (null: embedded) from the {@code kafka.*} keys of {@code settings}. */
    static KafkaAccess of(String bootstrap, Map<String, String> settings) throws IOException {
        Map<String, String> client = new LinkedHashMap<>();
        Map<String, String> ssl = new LinkedHashMap<>();
        String users = null;
        String operators = null;
        for (Map.Entry<String, String> e : settings.entrySet()) {
            String k = e.getKey();
            if (!k.startsWith(PREFIX)) {
                continue;
            }
            if (!knows(k)) {
                throw new IllegalArgumentException("unknown configuration key '" + k + "' (see ferry config show)");
            }
            check(k, e.getValue());
            if (k.equals(EmbeddedAuth.USERS_FILE_KEY)) {
                users = e.getValue();
            } else if (k.equals(EmbeddedAuth.OPERATORS_KEY)) {
                operators = e.getValue();
            } else if (k.startsWith(EMBEDDED_SSL)) {
                ssl.put(k.substring(EmbeddedAuth.SSL_PREFIX.length()), e.getValue());
            } else {
                client.put(k.substring(PREFIX.length()), e.getValue());
            }
        }
        // the users file matters only to the process that runs the embedded broker
        EmbeddedAuth embedded = bootstrap != null || users == null ? EmbeddedAuth.NONE
                : EmbeddedAuth.fromUsersFile(Path.of(users), ssl);
        if (bootstrap == null && users == null && operators != null) {
            throw new IllegalArgumentException(EmbeddedAuth.OPERATORS_KEY + " needs " + EmbeddedAuth.USERS_FILE_KEY
                    + ": operators are logins of the users file");
        }
        if (operators != null && bootstrap == null) {
            embedded = embedded.operatedBy(operators(operators));
        }
        if (bootstrap == null && users == null && !ssl.isEmpty()) {
            throw new IllegalArgumentException("TLS on the embedded broker (" + EMBEDDED_SSL
                    + "*) needs users too: set " + EmbeddedAuth.USERS_FILE_KEY);
        }
        return new KafkaAccess(bootstrap, new KafkaClientSettings(client), embedded);
    }

    /** The logins a {@link EmbeddedAuth#OPERATORS_KEY} value names. */
    private static Set<String> operators(String value) {
        Set<String> names = new TreeSet<>();
        for (String n : value.split(",")) {
            if (!n.isBlank()) {
                names.add(n.strip());
            }
        }
        return names;
    }

    /** The access of {@code bootstrap} configured by this host's file and {@code FERRY_KAFKA_*} variables. */
    static KafkaAccess configured(String bootstrap) throws IOException {
        return of(bootstrap, Configuration.kafka(Map.of(), System.getenv()));
    }

    /** Whether the log is a Kafka cluster given with {@code --kafka}, not the home's embedded broker. */
    boolean external() {
        return bootstrap != null;
    }
}
