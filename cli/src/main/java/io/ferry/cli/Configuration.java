package io.ferry.cli;

import io.ferry.agent.CacheRetention;
import io.ferry.agent.MetricsEndpoint;
import io.ferry.agent.peer.PeerAuth;
import io.ferry.cli.log.Logs;
import io.ferry.coordinator.CoordinatorSettings;
import io.ferry.model.ConfigKey;
import io.ferry.model.LaunchSpec;
import io.ferry.staging.StagingConfig;
import io.ferry.staging.StoreSettings;
import io.ferry.staging.crypt.Keys;
import io.ferry.stores.Stores;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * Where configuration comes from, in rising precedence: a file, {@code FERRY_*} environment
 * variables, and {@code --set KEY=VALUE} flags. The file is {@code $FERRY_CONFIG} when set (it
 * must exist), else {@code /etc/ferry/ferry.conf} when there is one: a site's defaults for every
 * user. It holds {@code KEY = VALUE} lines, {@code #} comments and blank lines. A key's
 * variable is {@code FERRY_} and the key in capitals with {@code .} and {@code -} as {@code _}
 * ({@code staging.zstd-level}: {@code FERRY_STAGING_ZSTD_LEVEL}; {@code s3.secret-access-key}:
 * {@code FERRY_S3_SECRET_ACCESS_KEY}, which keeps the secret off every command line). Keys are
 * the configuration table's (staging, cache, store, recovery) and the stores' options; a store
 * option from the file or the environment applies only to a store of its kind (a site file may
 * name S3 and HDFS settings both). {@code kafka.*} keys are the event log's client settings
 * ({@link KafkaAccess}), read by every command that talks to the log and kept apart from the
 * job's settings. Unknown keys and bad values fail at start-up naming the key and where it came
 * from. Read by the commands that start a job or open a store; the {@code log.level.*} keys
 * ({@code FERRY_LOG_LEVEL_*} variables) by every command at start-up.
 */
final class Configuration {
    static final String FILE_VARIABLE = "FERRY_CONFIG";
    static final Path SITE_FILE = Path.of("/etc/ferry/ferry.conf");

    /**
     * A key's value and where it came from: {@code default}, {@code file PATH:LINE}, {@code env NAME} or {@code --set}.
     */
    record Value(String key, String value, String source) {}

    private Configuration() {}

    /**
     * Keys whose values are files (comma-separated): relative ones mean the caller's directory, also under a daemon.
     */
    private static final Set<String> PATH_KEYS = Set.of(Keys.KEY_FILE.name(),
            Keys.PREVIOUS_KEY_FILES.name());

    private static String resolvePaths(String value) {
        Invocation inv = Invocation.current();
        if (!inv.served() || value.isBlank()) {
            return value;
        }
        return Arrays.stream(value.split(",")).map(String::strip)
                .map(f -> f.isEmpty() ? f : inv.resolve(f).toString())
                .collect(Collectors.joining(","));
    }

    /**
     * The settings a command uses: {@code flags} over the environment's over the file's, for a store of
     * {@code storeText}.
     */
    static Map<String, String> merged(Map<String, String> flags, String storeText) throws IOException {
        Map<String, String> out = new LinkedHashMap<>();
        effective(flags, System.getenv(), scheme(storeText)).forEach((k, v) -> {
            if (!processKey(k)) {
                out.put(k, PATH_KEYS.contains(k) ? resolvePaths(v.value()) : v.value());
            }
        });
        return out;
    }

    /**
     * Whether {@code key} configures a Ferry process rather than a job: the event log's login
     * ({@code kafka.*}), the agents' peer secret and where an agent serves its metrics
     * ({@code agent.metrics}), and how long an agent keeps the cache of a job that is over
     * ({@code cache.finished-retention}, {@code cache.failed-retention}), and the coordinator's own
     * ({@code coordinator.*}). Never a job's setting, never in the log.
     */
    static boolean processKey(String key) {
        return key.startsWith(KafkaAccess.PREFIX) || key.equals(PeerAuth.KEY) || Logs.isKey(key)
                || key.equals(MetricsEndpoint.KEY) || CacheRetention.TABLE.knows(key)
                || CoordinatorSettings.TABLE.knows(key);
    }

    /** The value of the process key {@code key} from the file and the environment, if set. */
    static Optional<String> processSetting(String key, Map<String, String> env) throws IOException {
        return Optional.ofNullable(effective(Map.of(), env, null).get(key)).map(Value::value);
    }

    /** The {@code kafka.*} settings: {@code flags} over the environment's over the file's. */
    static Map<String, String> kafka(Map<String, String> flags, Map<String, String> env) throws IOException {
        Map<String, String> out = new LinkedHashMap<>();
        effective(flags, env, null).forEach((k, v) -> {
            if (k.startsWith(KafkaAccess.PREFIX)) {
                out.put(k, v.value());
            }
        });
        return out;
    }

    /**
     * The {@code log.level.*} keys of the file, the environment and {@code flags}, in that
     * precedence, validated (a bad one fails naming the key and where it came from). Read by
     * every command at start-up; the file's other keys are checked by the commands that use them.
     */
    static Map<String, String> logLevels(Map<String, String> flags, Map<String, String> env) throws IOException {
        Map<String, String> out = new LinkedHashMap<>();
        Optional<Path> file = file(env);
        if (file.isPresent()) {
            List<String> lines = Files.readAllLines(file.get(), StandardCharsets.UTF_8);
            for (int i = 0; i < lines.size(); i++) {
                String line = lines.get(i).strip();
                int eq = line.indexOf('=');
                if (eq > 0 && Logs.isKey(line.substring(0, eq).strip())) {
                    logKey(out, line.substring(0, eq).strip(), line.substring(eq + 1).strip(),
                            "file " + file.get() + ":" + (i + 1));
                }
            }
        }
        for (Map.Entry<String, String> e : new TreeMap<>(env).entrySet()) {
            Optional<String> key = Logs.keyOfVariable(e.getKey());
            if (key.isPresent()) {
                logKey(out, key.get(), e.getValue(), "env " + e.getKey());
            }
        }
        flags.forEach((k, v) -> logKey(out, k, v, "--set"));
        return out;
    }

    private static void logKey(Map<String, String> out, String key, String value, String where) {
        try {
            Logs.level(key, value);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(where + ": " + e.getMessage());
        }
        out.put(key, value);
    }

    /**
     * The store credentials the file and the environment hold, for stores of every kind: what a
     * {@code ferry agent} uses to open a job's store (they never travel in the event log).
     */
    static Map<String, String> secrets(Map<String, String> env) throws IOException {
        Map<String, String> out = new LinkedHashMap<>();
        effective(Map.of(), env, null).forEach((k, v) -> {
            if (LaunchSpec.isSecret(k) && !processKey(k)) {
                out.put(k, v.value());
            }
        });
        return out;
    }

    /**
     * Every key set somewhere, with its value and source (defaults not included); {@code scheme} null: store options of
     * every kind.
     */
    static Map<String, Value> effective(Map<String, String> flags, Map<String, String> env, String scheme)
            throws IOException {
        Map<String, Value> out = new LinkedHashMap<>();
        Optional<Path> file = file(env);
        if (file.isPresent()) {
            List<String> lines = Files.readAllLines(file.get(), StandardCharsets.UTF_8);
            for (int i = 0; i < lines.size(); i++) {
                String line = lines.get(i).strip();
                if (line.isEmpty() || line.startsWith("#")) {
                    continue;
                }
                String where = "file " + file.get() + ":" + (i + 1);
                int eq = line.indexOf('=');
                if (eq <= 0) {
                    throw new IllegalArgumentException(where + ": expected KEY = VALUE, got '" + line + "'");
                }
                put(out, line.substring(0, eq).strip(), line.substring(eq + 1).strip(), where, scheme);
            }
        }
        for (Map.Entry<String, String> e : new TreeMap<>(env).entrySet()) {
            Optional<String> key = keyOf(e.getKey());
            if (key.isPresent()) {
                put(out, key.get(), e.getValue(), "env " + e.getKey(), scheme);
            }
        }
        flags.forEach((k, v) -> out.put(k, new Value(k, v, "--set"))); // checked where they are used, as before
        return out;
    }

    /** Every table key with its effective value and source, then the store options set. */
    static List<Value> show(Map<String, String> flags, Map<String, String> env, String scheme) throws IOException {
        Map<String, Value> set = effective(flags, env, scheme);
        List<Value> out = new ArrayList<>();
        for (ConfigKey<?> k : tableKeys()) {
            Value v = set.remove(k.name());
            out.add(v != null ? v : new Value(k.name(), k.defaultValue(), "default"));
        }
        out.addAll(set.values());
        if (!env.getOrDefault(Keys.VARIABLE, "").isEmpty()) {
            // the key itself is no configuration key (it must never be typed on a command line); shown hidden
            out.add(new Value("encryption.key", env.get(Keys.VARIABLE),
                    "env " + Keys.VARIABLE));
        }
        return out;
    }

    static List<ConfigKey<?>> tableKeys() {
        List<ConfigKey<?>> keys = new ArrayList<>(StagingConfig.TABLE.keys());
        keys.addAll(StoreSettings.TABLE.keys());
        keys.addAll(Keys.TABLE.keys());
        keys.addAll(CacheRetention.TABLE.keys());
        keys.addAll(CoordinatorSettings.TABLE.keys());
        return keys;
    }

    /** {@code $FERRY_CONFIG} (which must exist), else the site file if there is one. */
    static Optional<Path> file(Map<String, String> env) {
        String named = env.get(FILE_VARIABLE);
        if (named != null && !named.isEmpty()) {
            Path p = Invocation.current().resolve(named); // a daemon's client means its own directory
            if (!Files.isRegularFile(p)) {
                throw new IllegalArgumentException(FILE_VARIABLE + "=" + named + ": no such file");
            }
            return Optional.of(p);
        }
        return Files.isRegularFile(SITE_FILE) ? Optional.of(SITE_FILE) : Optional.empty();
    }

    /** The environment variable of {@code key}. */
    static String variableOf(String key) {
        return "FERRY_" + key.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
    }

    /** The key an environment variable sets, if it names one: every reading of its '_' as '.' or '-' is tried. */
    static Optional<String> keyOf(String variable) {
        if (!variable.startsWith("FERRY_") || variable.length() == 6) {
            return Optional.empty();
        }
        Optional<String> logKey = Logs.keyOfVariable(variable);
        if (logKey.isPresent()) {
            return logKey;
        }
        String rest = variable.substring(6).toLowerCase(Locale.ROOT);
        int gaps = (int) rest.chars().filter(c -> c == '_').count();
        if (gaps > 12) {
            return Optional.empty();
        }
        List<String> known = new ArrayList<>();
        for (int mask = 0; mask < 1 << gaps; mask++) {
            StringBuilder b = new StringBuilder();
            int gap = 0;
            for (char c : rest.toCharArray()) {
                b.append(c != '_' ? c : (mask & 1 << gap++) != 0 ? '.' : '-');
            }
            String k = b.toString();
            if (known(k) && variableOf(k).equals(variable)) {
                known.add(k);
            }
        }
        if (known.size() > 1) {
            throw new IllegalArgumentException(variable + " could name any of " + known
                    + ": set it in the configuration file");
        }
        return known.stream().findFirst();
    }

    private static boolean known(String key) {
        return StagingConfig.TABLE.knows(key) || StoreSettings.TABLE.knows(key)
                || Keys.TABLE.knows(key)
                || CacheRetention.TABLE.knows(key) || CoordinatorSettings.TABLE.knows(key)
                || !Stores.schemesAccepting(key).isEmpty()
                || KafkaAccess.knows(key) || key.equals(PeerAuth.KEY)
                || key.equals(MetricsEndpoint.KEY);
    }

    private static void put(Map<String, Value> out, String key, String value, String where, String scheme) {
        Optional<ConfigKey<?>> table = tableKeys().stream().filter(k -> k.name().equals(key)).findFirst();
        if (Logs.isKey(key)) {
            logKey(new LinkedHashMap<>(), key, value, where);
            out.put(key, new Value(key, value, where));
        } else if (table.isPresent()) {
            try {
                table.get().parse(value);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(where + ": " + key + "=" + value + ": " + e.getMessage());
            }
            out.put(key, new Value(key, value, where));
        } else if (key.equals(PeerAuth.KEY)) {
            if (value.isBlank()) {
                throw new IllegalArgumentException(where + ": " + key + " must name a file");
            }
            out.put(key, new Value(key, value, where));
        } else if (key.equals(MetricsEndpoint.KEY)) {
            try {
                AgentMetrics.address(value);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(where + ": " + e.getMessage());
            }
            out.put(key, new Value(key, value, where));
        } else if (KafkaAccess.knows(key)) {
            try {
                KafkaAccess.check(key, value);
            } catch (IllegalArgumentException e) {
                // never the value: it may be a secret
                throw new IllegalArgumentException(where + ": " + e.getMessage());
            }
            out.put(key, new Value(key, value, where));
        } else if (!Stores.schemesAccepting(key).isEmpty()) {
            if (scheme == null || Stores.accepts(scheme, key)) {
                out.put(key, new Value(key, value, where));
            } // else: an option of another kind of store than this command's
        } else {
            throw new IllegalArgumentException(where + ": unknown configuration key '" + key
                    + "' (see ferry config show)");
        }
    }

    /** The scheme of a store as typed ({@code file} for a plain path, or for none: the home's store). */
    static String scheme(String storeText) {
        return storeText == null ? "file" : Stores.parse(storeText).getScheme();
    }
}
