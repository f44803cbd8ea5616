package io.ferry.eventlog;

import io.ferry.model.OwnerOnly;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The login of an embedded broker's listener on loopback, for its own user only. A broker
 * without a login on loopback lets every local user write Ferry's topics, and so have an agent
 * run a program as the agent's user: the listener requires SASL/PLAIN there too, as user
 * {@link #USER} with a password drawn once per log (kept beside it, so agents that logged in
 * before a restart of the broker log in again after it). The password is written to
 * {@code kafka-<port>.login} (0600) in the user's private runtime directory
 * ({@link OwnerOnly#privateRuntimeDir}: {@code $XDG_RUNTIME_DIR/ferry}, else
 * {@code /tmp/ferry-<uid>}, 0700 and refused when another user owns it), and a Ferry client
 * that connects to a loopback address without a login of its own ({@code kafka.security.protocol}
 * unset) looks for it there: the same user on the same host logs in without asking, another
 * user finds no file, and the broker drops that client. Only a file of this user's own, open to
 * nobody else, in a directory of this user's own, is read. Stateless; thread-safe.
 */
public final class LoopbackLogin {
    /** The SASL user of the loopback login; a users file may not name it. */
    public static final String USER = "ferry-local";

    private LoopbackLogin() {
    }

    /**
     * Writes the login of the broker listening on loopback {@code port} into this user's runtime
     * directory, and into {@code /tmp/ferry-<uid>} too when that is another one (where a process
     * without the session's {@code XDG_RUNTIME_DIR} looks: a service, a batch job); returns the first.
     */
    static Path publish(int port, String password) throws IOException {
        Path file = write(OwnerOnly.privateRuntimeDir(System.getenv()), port, password);
        try {
            Path fallback = OwnerOnly.privateRuntimeDir(Map.of());
            if (!fallback.equals(file.getParent())) {
                write(fallback, port, password);
            }
        } catch (IOException e) { // the first serves this user's sessions
            System.err.println("ferry: the broker's login is not left in /tmp as well: " + e.getMessage());
        }
        return file;
    }

    private static Path write(Path dir, int port, String password) throws IOException {
        return OwnerOnly.writePrivate(dir.resolve(fileName(port)), USER + ":" + password + "\n");
    }

    /**
     * Removes the login files {@link #publish} left as {@code file} (and in {@code /tmp}) if they
     * still hold {@code password}: no later broker took the port.
     */
    static void withdraw(Path file, String password) {
        for (Path dir : candidates(System.getenv())) {
            Path f = dir.resolve(file.getFileName());
            if (read(f).filter(password::equals).isPresent()) {
                try {
                    Files.deleteIfExists(f);
                } catch (IOException ignored) {
                    // a stale file names a port nobody listens on, or the next broker's: harmless
                }
            }
        }
    }

    /**
     * The client settings that log in to the embedded broker at {@code bootstrap}, when every
     * address it names is on loopback and this user has a login file for its first port; empty
     * otherwise (a remote broker, a site's Kafka, another user's broker).
     */
    public static Optional<KafkaClientSettings> find(String bootstrap) {
        String first = bootstrap.split(",")[0].trim();
        HostPort hp;
        try {
            hp = HostPort.parse(first, "--kafka");
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
        if (hp.port() == 0 || !hp.loopbackOnly()) {
            return Optional.empty();
        }
        for (Path dir : candidates(System.getenv())) {
            Optional<String> password = read(dir.resolve(fileName(hp.port())));
            if (password.isPresent()) {
                return Optional.of(new KafkaClientSettings(EmbeddedAuth.plainClient("SASL_PLAINTEXT", USER,
                        password.get())));
            }
        }
        return Optional.empty();
    }

    /**
     * {@code config} (a raw Kafka client's: a test's, a benchmark's) with this user's loopback
     * login added when {@code bootstrap} is an embedded broker on loopback, as {@link KafkaLog} does.
     */
    public static Map<String, Object> clientConfig(String bootstrap, Map<String, Object> config) {
        Map<String, Object> out = new HashMap<>(config);
        find(bootstrap).ifPresent(login -> out.putAll(login.settings()));
        return out;
    }

    /**
     * {@code client}, with this user's loopback login added when it names no security protocol of
     * its own and {@code bootstrap} is an embedded broker on loopback.
     */
    static KafkaClientSettings addedTo(String bootstrap, KafkaClientSettings client) {
        if (client.settings().containsKey("security.protocol")) {
            return client;
        }
        return find(bootstrap).map(login -> {
            Map<String, String> both = new HashMap<>(client.settings());
            both.putAll(login.settings());
            return new KafkaClientSettings(both);
        }).orElse(client);
    }

    /** Where {@link #find} looks: every runtime directory this user's processes may have written to. */
    static List<Path> candidates(Map<String, String> env) {
        List<Path> out = new ArrayList<>();
        String xdg = env.get("XDG_RUNTIME_DIR");
        if (xdg != null && !xdg.isBlank()) { // a coordinator under systemd has none, the user's shell has one
            out.add(Path.of(xdg, "ferry"));
        }
        out.add(Path.of("/tmp", "ferry-" + OwnerOnly.uid()));
        return out;
    }

    /** The password in {@code file}, if it and its directory are this user's own and nobody else's. */
    private static Optional<String> read(Path file) {
        try {
            int uid = OwnerOnly.uid();
            if (!ownOnly(file.getParent(), uid) || !ownOnly(file, uid)) {
                return Optional.empty();
            }
            String line = Files.readString(file, StandardCharsets.US_ASCII).strip();
            return line.startsWith(USER + ":") ? Optional.of(line.substring(USER.length() + 1)) : Optional.empty();
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    private static boolean ownOnly(Path p, int uid) throws IOException {
        if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        PosixFileAttributes a = Files.readAttributes(p, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        return !a.isSymbolicLink() && (Integer) Files.getAttribute(p, "unix:uid", LinkOption.NOFOLLOW_LINKS) == uid
                && a.permissions().stream().allMatch(x -> x.name().startsWith("OWNER_"));
    }

    private static String fileName(int port) {
        return "kafka-" + port + ".login";
    }
}
