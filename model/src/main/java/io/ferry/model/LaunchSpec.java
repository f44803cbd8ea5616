package io.ferry.model;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * What every node of a job needs to start and checkpoint its ranks: the program, how ranks
 * are captured, and the store settings ({@code --set}). Carried by {@link Event.JobStarted}
 * and each {@link Command.Launch}. Store credentials are never in it: agents take them from
 * their own environment (see {@link #withoutSecrets(Map)}), and do not hand them to the ranks
 * unless the job names them ({@link #removeSecrets(Map, java.util.Collection)}).
 *
 * @param program              the program and arguments every rank runs
 * @param capture              {@code app}, {@code proc}, {@code criu} or {@code dmtcp}
 * @param captureTimeoutMillis how long a checkpoint waits for every rank of a node
 * @param signal               the signal of the protocol's signal mode, e.g. {@code USR2}
 * @param settings             configuration ({@code --set}), secrets removed
 */
public record LaunchSpec(List<String> program, String capture, long captureTimeoutMillis, String signal,
                         Map<String, String> settings) {
    public LaunchSpec {
        program = List.copyOf(program);
        settings = Map.copyOf(settings);
        if (captureTimeoutMillis <= 0) {
            throw new IllegalArgumentException("capture timeout must be positive, got " + captureTimeoutMillis + " ms");
        }
        if (capture == null || signal == null) {
            throw new IllegalArgumentException("capture method and signal are required");
        }
    }

    /** The cooperative protocol, 60 s, SIGUSR2, no settings. */
    public static LaunchSpec of(List<String> program) {
        return new LaunchSpec(program, "app", 60_000, "USR2", Map.of());
    }

    /** {@code settings} less the keys that hold credentials: those must not be written to the log. */
    public static Map<String, String> withoutSecrets(Map<String, String> settings) {
        Map<String, String> out = new TreeMap<>();
        settings.forEach((k, v) -> {
            // the event log's login and the agents' peer secret configure processes, not jobs
            if (!isSecret(k) && !k.startsWith("kafka.") && !k.startsWith("peer.")) {
                out.put(k, v);
            }
        });
        return out;
    }

    /** Whether a key or {@code FERRY_} variable name holds a credential, by its name. */
    public static boolean isSecret(String key) {
        String k = key.toLowerCase(Locale.ROOT);
        return k.contains("secret") || k.contains("access-key") || k.contains("password") || k.contains("token")
                || k.contains("jaas") || k.contains("passphrase")
                // the key of encryption at rest (FERRY_ENCRYPTION_KEY); encryption.key-file is a path and travels
                || k.equals("encryption.key") || k.endsWith("encryption-key");
    }

    /**
     * Removes from a child process's environment what it must not inherit from Ferry: the
     * {@code FERRY_*} variables that hold credentials ({@code FERRY_S3_SECRET_ACCESS_KEY}), every
     * {@code FERRY_KAFKA_*} variable (the event log's TLS and SASL settings: a rank has no business
     * with the log, and a JAAS setting holds a password whatever its name), and every store
     * credential ({@link #isStoreCredential}).
     */
    public static void removeSecrets(Map<String, String> environment) {
        removeSecrets(environment, Set.of());
    }

    /**
     * {@link #removeSecrets(Map)}, except the store credentials named in {@code passed} (a job's
     * {@code rank.pass-env}): Ferry's own {@code FERRY_*} secrets are never passed.
     */
    public static void removeSecrets(Map<String, String> environment, Collection<String> passed) {
        environment.keySet().removeIf(k -> k.startsWith("FERRY_KAFKA_")
                || k.startsWith("FERRY_") && isSecret(k.replace('_', '-'))
                || isStoreCredential(k) && !passed.contains(k));
    }

    /**
     * Whether an environment variable holds (or leads to) a store's credentials, which the agent
     * and {@code ferry run} have for Ferry's own store access and a rank does not inherit unless its
     * job names it in {@code rank.pass-env}: every {@code AWS_*} and {@code AZURE_*} variable (keys,
     * session tokens, profiles, credential files, web identity), {@code GOOGLE_APPLICATION_CREDENTIALS},
     * Kerberos' {@code KRB5CCNAME}, {@code KRB5_KTNAME} and {@code KRB5_CLIENT_KTNAME}, and Hadoop's
     * delegation tokens {@code HADOOP_TOKEN_FILE_LOCATION} and {@code HADOOP_TOKEN}.
     */
    public static boolean isStoreCredential(String variable) {
        return variable.startsWith("AWS_") || variable.startsWith("AZURE_") || STORE_CREDENTIALS.contains(variable);
    }

    private static final Set<String> STORE_CREDENTIALS = Set.of("GOOGLE_APPLICATION_CREDENTIALS",
            "KRB5CCNAME", "KRB5_KTNAME", "KRB5_CLIENT_KTNAME", "HADOOP_TOKEN_FILE_LOCATION", "HADOOP_TOKEN");

    /**
     * Parses a {@code rank.pass-env} value: store credential variables, comma-separated, each of
     * which {@link #isStoreCredential} withholds (any other variable reaches the ranks anyway, so a
     * name that is not one is a mistake, refused naming it).
     */
    public static List<String> parsePassEnv(String text) {
        List<String> out = new ArrayList<>();
        for (String n : text.split(",")) {
            String name = n.trim();
            if (name.isEmpty()) {
                continue;
            }
            if (!isStoreCredential(name)) {
                throw new IllegalArgumentException("'" + name + "' is not a store credential that"
                        + " ranks are kept from (AWS_*, AZURE_*, GOOGLE_APPLICATION_CREDENTIALS,"
                        + " KRB5CCNAME, KRB5_KTNAME, KRB5_CLIENT_KTNAME, HADOOP_TOKEN_FILE_LOCATION,"
                        + " HADOOP_TOKEN): every other variable reaches them anyway");
            }
            out.add(name);
        }
        return List.copyOf(out);
    }
}
