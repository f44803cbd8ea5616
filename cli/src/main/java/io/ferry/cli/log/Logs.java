package io.ferry.cli.log;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import org.slf4j.LoggerFactory;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The {@code ferry} process's logging set-up: levels per logger from {@code log.level.<logger>}
 * keys (the configuration file, {@code FERRY_LOG_LEVEL_*} variables, {@code --set} and
 * {@code --log-level} flags) over the levels of the Logback file in use: cli's own
 * {@code logback.xml}, or a site's named by {@code -Dlogback.configurationFile} or
 * {@code FERRY_LOGBACK}. Called once at start-up, before anything logs; a second call (tests
 * running commands in one JVM) first restores the levels the first one changed.
 */
public final class Logs {
    /** Keys {@code log.level.<logger>}: {@code log.level.io.ferry=debug}; {@code log.level.root} is the root logger. */
    public static final String KEY_PREFIX = "log.level.";
    /** A site's own Logback file, used unless {@code -Dlogback.configurationFile} names one. */
    public static final String SITE_FILE_VARIABLE = "FERRY_LOGBACK";
    static final String LOGBACK_PROPERTY = "logback.configurationFile";
    private static final String VARIABLE_PREFIX = "FERRY_LOG_LEVEL_";
    private static final Pattern LOGGER = Pattern.compile("[A-Za-z_$][A-Za-z0-9_$-]*(\\.[A-Za-z_$][A-Za-z0-9_$-]*)*");
    private static final Map<String, Level> replaced = new HashMap<>();

    private Logs() {}

    public static boolean isKey(String key) {
        return key.startsWith(KEY_PREFIX);
    }

    /** The logger a {@code log.level.} key names; refuses a malformed name, naming the key. */
    public static String loggerOf(String key) {
        String name = key.substring(KEY_PREFIX.length());
        if (!LOGGER.matcher(name).matches()) {
            throw new IllegalArgumentException("configuration key '" + key + "': '" + name
                    + "' is not a logger or package name (e.g. log.level.io.ferry.agent)");
        }
        return name.equals("root") ? Logger.ROOT_LOGGER_NAME : name;
    }

    /**
     * The level a key's value names: trace, debug, info, warn, error or off; anything else is refused naming the key.
     */
    public static Level level(String key, String value) {
        loggerOf(key);
        String v = value == null ? "" : value.strip().toUpperCase(Locale.ROOT);
        switch (v) {
            case "TRACE": return Level.TRACE;
            case "DEBUG": return Level.DEBUG;
            case "INFO": return Level.INFO;
            case "WARN": return Level.WARN;
            case "ERROR": return Level.ERROR;
            case "OFF": return Level.OFF;
            default:
                throw new IllegalArgumentException("configuration key '" + key + "': invalid value '" + value
                        + "': use one of trace, debug, info, warn, error, off");
        }
    }

    /**
     * The key a {@code FERRY_LOG_LEVEL_*} variable sets, its {@code _} read as {@code .}
     * ({@code FERRY_LOG_LEVEL_ORG_APACHE_KAFKA}: {@code log.level.org.apache.kafka}): package
     * names only, in lower case; a class's logger is set in the file or with a flag.
     */
    public static Optional<String> keyOfVariable(String variable) {
        if (!variable.startsWith(VARIABLE_PREFIX) || variable.length() == VARIABLE_PREFIX.length()) {
            return Optional.empty();
        }
        return Optional.of(KEY_PREFIX
                + variable.substring(VARIABLE_PREFIX.length()).toLowerCase(Locale.ROOT).replace('_', '.'));
    }

    /**
     * A {@code --log-level} value, {@code LEVEL} (for {@code io.ferry}) or {@code LOGGER=LEVEL}, as a key and its
     * value.
     */
    public static Map.Entry<String, String> fromFlag(String text) {
        int eq = text.indexOf('=');
        String key = KEY_PREFIX + (eq < 0 ? "io.ferry" : text.substring(0, eq).strip());
        String value = eq < 0 ? text : text.substring(eq + 1);
        level(key, value);
        return Map.entry(key, value.strip());
    }

    /**
     * Points Logback at the site's file named by {@code FERRY_LOGBACK} (it must exist) unless
     * {@code -Dlogback.configurationFile} is given; must run before the first logger is made.
     */
    public static void useSiteFile(Map<String, String> env) {
        String named = env.get(SITE_FILE_VARIABLE);
        if (named == null || named.isEmpty() || System.getProperty(LOGBACK_PROPERTY) != null) {
            return;
        }
        if (!Files.isRegularFile(Path.of(named))) {
            throw new IllegalArgumentException(SITE_FILE_VARIABLE + "=" + named + ": no such file");
        }
        System.setProperty(LOGBACK_PROPERTY, named);
    }

    /** Whether the levels come from cli's own logback.xml (no site file). */
    public static boolean builtIn() {
        return System.getProperty(LOGBACK_PROPERTY) == null;
    }

    /**
     * Sets each key's level over the file's (validated: a bad one fails before any is set). Does
     * nothing where slf4j is bound to another provider than Logback.
     */
    public static synchronized void apply(Map<String, String> keys) {
        Map<String, Level> levels = new HashMap<>();
        keys.forEach((k, v) -> levels.put(loggerOf(k), level(k, v)));
        if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext)) {
            return;
        }
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        replaced.forEach((name, before) -> context.getLogger(name).setLevel(before));
        replaced.clear();
        levels.forEach((name, level) -> {
            Logger l = context.getLogger(name);
            replaced.putIfAbsent(name, l.getLevel());
            l.setLevel(level);
        });
    }
}
