package io.ferry.eventlog;

import io.ferry.model.OwnerOnly;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Who may use the embedded broker's client listener: SASL/PLAIN users and their passwords,
 * over TLS (SASL_SSL) when {@code ssl} names a keystore, else over SASL_PLAINTEXT. {@link #NONE}:
 * no authentication, allowed on loopback only. Immutable; {@link #toString()} shows no password.
 *
 * <p>PLAIN, not SCRAM: the broker checks PLAIN passwords against its listener's JAAS settings,
 * which Ferry writes from the users file at every start, so editing the file and restarting
 * the coordinator is the whole of user management, and an existing log needs no migration.
 * SCRAM credentials live in the cluster metadata, made at format time or through the admin
 * API, which would need a privileged path into the broker before anyone may connect. PLAIN
 * sends the password itself, so off a trusted network give the listener a keystore (SASL_SSL).
 *
 * <p>Operators ({@code kafka.embedded.operators}): the logins that write Ferry's topics (agents,
 * administrators) and control every job. Where some are named, every other login of the users
 * file is a user: it reads the log, writes only its own request topic ({@link RequestTopics}, Kafka
 * ACLs), and controls only the jobs it submitted. None named: every login is an operator, as
 * before jobs had owners.
 *
 * @param users     name to password
 * @param ssl       the listener's {@code ssl.*} settings (keystore location, passwords, type); empty: no TLS
 * @param operators the logins that control every job; empty: all of them (jobs have no owners)
 */
public record EmbeddedAuth(Map<String, String> users, Map<String, String> ssl, Set<String> operators) {
    /** The configuration key that names the users file (Ferry's configuration, not Kafka's). */
    public static final String USERS_FILE_KEY = "kafka.embedded.users-file";
    /** The prefix of the keys that give the listener TLS: {@code kafka.embedded.ssl.keystore.location}... */
    public static final String SSL_PREFIX = "kafka.embedded.";
    /** The configuration key that names the operators' logins, comma-separated. */
    public static final String OPERATORS_KEY = "kafka.embedded.operators";
    /** No authentication. */
    public static final EmbeddedAuth NONE = new EmbeddedAuth(Map.of(), Map.of());

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,64}");

    public EmbeddedAuth(Map<String, String> users, Map<String, String> ssl) {
        this(users, ssl, Set.of());
    }

    public EmbeddedAuth {
        operators = Set.copyOf(operators);
        for (String o : operators) {
            if (!users.containsKey(o)) {
                throw new IllegalArgumentException(OPERATORS_KEY + " names '" + o + "', which is not a user of "
                        + USERS_FILE_KEY);
            }
        }
        users = Map.copyOf(new TreeMap<>(users));
        ssl = Map.copyOf(new TreeMap<>(ssl));
        users.forEach((name, password) -> {
            if (!NAME.matcher(name).matches()) {
                throw new IllegalArgumentException("SASL user name '" + name + "' must be 1-64 of [A-Za-z0-9._-]");
            }
            // the password goes into a quoted JAAS value: no quote or backslash, nothing unprintable
            if (password.isEmpty() || password.chars().anyMatch(c -> c < ' ' || c > '~' || c == '"' || c == '\\')) {
                throw new IllegalArgumentException("the password of SASL user '" + name + "' must be printable ASCII"
                        + " without '\"' or '\\'");
            }
        });
        if (!ssl.isEmpty() && users.isEmpty()) {
            throw new IllegalArgumentException("TLS on the embedded broker (" + SSL_PREFIX
                    + "ssl.*) needs users too: set " + USERS_FILE_KEY);
        }
        for (String k : ssl.keySet()) {
            if (!k.startsWith("ssl.")) {
                throw new IllegalArgumentException("embedded broker TLS setting '" + k + "' is not an ssl.* key");
            }
        }
        if (!ssl.isEmpty() && !ssl.containsKey("ssl.keystore.location")) {
            throw new IllegalArgumentException("TLS on the embedded broker needs " + SSL_PREFIX
                    + "ssl.keystore.location");
        }
    }

    /**
     * Reads {@code file}: one {@code NAME:PASSWORD} line per user, {@code #} comments and blank
     * lines. Refused when it is open to group or others, empty, or malformed (naming the line).
     */
    public static EmbeddedAuth fromUsersFile(Path file, Map<String, String> ssl) throws IOException {
        OwnerOnly.requirePrivate(file, USERS_FILE_KEY);
        if (Files.size(file) > 1 << 20) {
            throw new IllegalArgumentException(USERS_FILE_KEY + " " + file + " is over 1 MiB");
        }
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        Map<String, String> users = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int colon = line.indexOf(':');
            String where = USERS_FILE_KEY + " " + file + ":" + (i + 1);
            if (colon <= 0) {
                throw new IllegalArgumentException(where + ": expected NAME:PASSWORD"); // the line may hold a password
            }
            if (users.put(line.substring(0, colon), line.substring(colon + 1)) != null) {
                throw new IllegalArgumentException(where + ": user '" + line.substring(0, colon) + "' given twice");
            }
        }
        if (users.isEmpty()) {
            throw new IllegalArgumentException(USERS_FILE_KEY + " " + file + " names no user (NAME:PASSWORD lines)");
        }
        try {
            return new EmbeddedAuth(users, ssl);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(USERS_FILE_KEY + " " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * These users and {@code name} with {@code password}: the loopback login ({@link LoopbackLogin}),
     * refused when the users file already names it.
     */
    EmbeddedAuth with(String name, String password) {
        if (users.containsKey(name)) {
            throw new IllegalArgumentException(USERS_FILE_KEY + " names user '" + name + "', which Ferry keeps for the"
                    + " login of its own user on loopback: rename it");
        }
        Map<String, String> more = new TreeMap<>(users);
        more.put(name, password);
        Set<String> ops = new TreeSet<>(operators);
        if (!ops.isEmpty()) {
            ops.add(name); // the broker's own user on loopback runs the service: an operator
        }
        return new EmbeddedAuth(more, ssl, ops);
    }

    /** These users, with {@code operators} alone controlling every job ({@link #OPERATORS_KEY}). */
    public EmbeddedAuth operatedBy(Set<String> operators) {
        return new EmbeddedAuth(users, ssl, operators);
    }

    /** Whether jobs have owners: some logins are operators, the others users. */
    public boolean owners() {
        return !operators.isEmpty();
    }

    /**
     * The logins that are not operators, each writing through its own request topic; none when {@link #owners()} is
     * false.
     */
    public SortedSet<String> restricted() {
        SortedSet<String> r = new TreeSet<>(users.keySet());
        r.removeAll(operators);
        return owners() ? r : new TreeSet<>();
    }

    /** Whether clients must authenticate. */
    public boolean required() {
        return !users.isEmpty();
    }

    /** The client listener's security protocol. */
    public String protocol() {
        return !required() ? "PLAINTEXT" : ssl.isEmpty() ? "SASL_PLAINTEXT" : "SASL_SSL";
    }

    /** A PLAIN server JAAS entry accepting {@code accepted}, logging in as {@code self} when given (inter-broker). */
    static String plainServerJaas(Map<String, String> accepted, Map.Entry<String, String> self) {
        StringBuilder b = new StringBuilder("org.apache.kafka.common.security.plain.PlainLoginModule required");
        if (self != null) {
            b.append(" username=\"").append(self.getKey()).append("\" password=\"").append(self.getValue()).append('"');
        }
        accepted.forEach((u, p) -> b.append(" user_").append(u).append("=\"").append(p).append('"'));
        return b.append(';').toString();
    }

    /** Client settings that log in as {@code user} with PLAIN over {@code protocol}. */
    static Map<String, String> plainClient(String protocol, String user, String password) {
        return Map.of("security.protocol", protocol, "sasl.mechanism", "PLAIN", "sasl.jaas.config",
                "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"" + user
                        + "\" password=\"" + password + "\";");
    }

    @Override
    public String toString() {
        return "EmbeddedAuth[users=" + users.keySet() + ", " + protocol() + (owners() ? ", operators=" + operators : "")
                + "]";
    }
}
