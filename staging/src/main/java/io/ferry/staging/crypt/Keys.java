package io.ferry.staging.crypt;

import io.ferry.model.ConfigKey;
import io.ferry.model.ConfigTable;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The keys of encryption at rest, derived from one 32-byte master key: a data key (AES-256-GCM,
 * seals each blob record), a naming key (HMAC-SHA256, names each blob so that equal plaintexts
 * show as equal names only to holders of the key) and a key id (8 bytes, recorded in manifests and
 * sealed records so that a wrong key is told apart from damage). Each is HMAC-SHA256(master, label),
 * the one-block PRF of a KDF in counter mode (NIST SP 800-108): distinct labels give independent
 * keys, and the id reveals nothing of the others.
 *
 * <p>The master key is written as 64 hex digits (either case; surrounding white space, such as a
 * file's last newline, is ignored), in a file named by {@code encryption.key-file} or in the
 * environment variable {@code FERRY_ENCRYPTION_KEY}. Nothing here prints a key: messages name the
 * source and the length. Immutable and thread-safe.
 */
public final class Keys {
    /** The environment variable that may hold the master key itself. */
    public static final String VARIABLE = "FERRY_ENCRYPTION_KEY";
    public static final ConfigKey<String> KEY_FILE = new ConfigKey<>("encryption.key-file",
            "File holding the 32-byte key of encryption at rest as 64 hex digits (e.g. 'openssl rand -hex 32');"
                    + " FERRY_ENCRYPTION_KEY may hold the same text instead. Set, every blob is encrypted"
                    + " (AES-256-GCM) and named by a keyed hash before it leaves the node. Pack layout only"
                    + " (staging.layout=packs). Empty: no encryption.",
            "", v -> v);
    public static final ConfigKey<String> PREVIOUS_KEY_FILES = new ConfigKey<>("encryption.previous-key-files",
            "Key files of keys this store was encrypted with before encryption.key-file's, comma-separated:"
                    + " pulls, restarts, verify and repair open what they sealed; pushes seal with the"
                    + " current key only. Rotating: make the new key current and list the old one here"
                    + " until no kept generation uses it ('ferry store ls' shows each generation's key id).",
            "", v -> v);
    public static final ConfigTable TABLE = new ConfigTable(List.of(KEY_FILE, PREVIOUS_KEY_FILES));
    static final int MASTER = 32;
    public static final int ID_LENGTH = 8;

    private final SecretKeySpec dataKey;
    private final SecretKeySpec namingKey;
    private final byte[] id;
    private final String idHex;
    /** Keys of earlier rotations: they open what they sealed; never used to seal. */
    private final List<Keys> previous;

    private Keys(Keys current, List<Keys> previous) {
        this.dataKey = current.dataKey;
        this.namingKey = current.namingKey;
        this.id = current.id;
        this.idHex = current.idHex;
        this.previous = List.copyOf(previous);
    }

    private Keys(byte[] master) {
        this.previous = List.of();
        this.dataKey = new SecretKeySpec(derive(master, "ferry/v1 data key"), "AES");
        this.namingKey = new SecretKeySpec(derive(master, "ferry/v1 naming key"), "HmacSHA256");
        this.id = Arrays.copyOf(derive(master, "ferry/v1 key id"), ID_LENGTH);
        this.idHex = HexFormat.of().formatHex(id);
    }

    /**
     * The keys the settings and the environment configure: {@code encryption.key-file} and
     * {@code FERRY_ENCRYPTION_KEY}; empty if neither is set. Both set must hold the same key.
     * Throws {@link IllegalArgumentException} in one line naming the source of a bad key.
     */
    public static Optional<Keys> resolve(Map<String, String> settings, Map<String, String> env) {
        String file = settings.getOrDefault(KEY_FILE.name(), "").trim();
        String text = env.getOrDefault(VARIABLE, "");
        Optional<Keys> fromEnv = text.isEmpty() ? Optional.empty()
                : Optional.of(parse(text, "environment variable " + VARIABLE));
        if (file.isEmpty()) {
            return fromEnv;
        }
        Keys fromFile = readFile(Path.of(file));
        if (fromEnv.isPresent() && !fromEnv.get().id().equals(fromFile.id())) {
            throw new IllegalArgumentException(KEY_FILE.name() + " (" + file + ") and " + VARIABLE
                    + " hold different keys (ids " + fromFile.id() + " and " + fromEnv.get().id()
                    + "): set one of them");
        }
        return Optional.of(fromFile);
    }

    /**
     * {@link #resolve(Map, Map)}, with the keys of {@code encryption.previous-key-files} attached to the
     * current key for opening what they sealed. Previous keys without a current one are refused: a
     * store is read with its old keys while it is written with a new one.
     */
    public static Optional<Keys> resolveWithPrevious(Map<String, String> settings, Map<String, String> env) {
        Optional<Keys> current = resolve(settings, env);
        String files = settings.getOrDefault(PREVIOUS_KEY_FILES.name(), "").trim();
        if (files.isEmpty()) {
            return current;
        }
        if (current.isEmpty()) {
            throw new IllegalArgumentException(PREVIOUS_KEY_FILES.name() + " needs a current key (" + KEY_FILE.name()
                    + " or " + VARIABLE
                    + "): previous keys only open what they sealed, and pushes seal with the current one");
        }
        List<Keys> previous = new ArrayList<>();
        for (String f : files.split(",")) {
            if (!f.isBlank()) {
                previous.add(readFile(Path.of(f.trim()), PREVIOUS_KEY_FILES.name()));
            }
        }
        return Optional.of(current.get().withPrevious(previous));
    }

    /** This key, with {@code previous} (keys of earlier rotations) to open what they sealed. */
    public Keys withPrevious(List<Keys> previous) {
        List<Keys> distinct = new ArrayList<>();
        for (Keys k : previous) {
            if (!k.id().equals(id()) && distinct.stream().noneMatch(d -> d.id().equals(k.id()))) {
                distinct.add(new Keys(k, List.of()));
            }
        }
        return new Keys(this, distinct);
    }

    /** Keys of earlier rotations, which open what they sealed (empty: only this key). */
    public List<Keys> previous() {
        return previous;
    }

    /** The keys of the key file {@code path}, named by {@code encryption.key-file} in an error. */
    public static Keys readFile(Path path) {
        return readFile(path, KEY_FILE.name());
    }

    /** The keys of the key file {@code path}; an error names it as the value of {@code setting}. */
    static Keys readFile(Path path, String setting) {
        String text;
        try {
            // As the HTTP token and the peer secret: a key others can read is a key others hold.
            Set<PosixFilePermission> mode = Files.getPosixFilePermissions(path);
            if (mode.stream().anyMatch(p -> p.name().startsWith("GROUP_") || p.name().startsWith("OTHERS_"))) {
                throw new IllegalArgumentException(setting + "=" + path + " is open to others ("
                        + PosixFilePermissions.toString(mode) + "): chmod 600 " + path);
            }
            text = Files.readString(path, StandardCharsets.US_ASCII);
        } catch (CharacterCodingException e) { // not ASCII, so not hex digits
            throw new IllegalArgumentException(setting + "=" + path + ": expected the 32-byte key as 64 hex digits,"
                    + " found other characters");
        } catch (IOException e) {
            throw new IllegalArgumentException(setting + "=" + path + ": cannot read the key file ("
                    + e.getClass().getSimpleName() + ")");
        }
        return parse(text, setting + "=" + path);
    }

    /** Parses 64 hex digits; {@code source} names where they came from in an error (the text is never shown). */
    public static Keys parse(String text, String source) {
        String t = text.strip();
        if (t.length() != 2 * MASTER || !t.chars().allMatch(c -> Character.digit(c, 16) >= 0)) {
            throw new IllegalArgumentException(source + ": expected the 32-byte key as 64 hex digits, found "
                    + t.length() + " characters" + (t.length() == 2 * MASTER ? " that are not all hex digits" : ""));
        }
        byte[] master = HexFormat.of().parseHex(t.toLowerCase(Locale.ROOT));
        try {
            return new Keys(master);
        } finally {
            Arrays.fill(master, (byte) 0);
        }
    }

    private static byte[] derive(byte[] master, String label) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(master, "HmacSHA256"));
            return mac.doFinal(label.getBytes(StandardCharsets.US_ASCII));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every Java 17 runtime", e);
        }
    }

    /** The key id: 16 lower-case hex digits, what manifests record. */
    public String id() {
        return idHex;
    }

    /** The key id's 8 bytes, what sealed records carry. */
    byte[] idBytes() {
        return id.clone();
    }

    /** Whether {@code other} (8 bytes at {@code off}) is this key's id. */
    boolean isId(byte[] other, int off) {
        return MessageDigest.isEqual(id, Arrays.copyOfRange(other, off, off + ID_LENGTH));
    }

    SecretKeySpec dataKey() {
        return dataKey;
    }

    SecretKeySpec namingKey() {
        return namingKey;
    }

    /** The key id only: a key never shows in a log or a message. */
    @Override
    public String toString() {
        return "Keys[id " + idHex + "]";
    }
}
