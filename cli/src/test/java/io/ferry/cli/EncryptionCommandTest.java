package io.ferry.cli;

import io.ferry.model.LaunchSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Encryption at rest through the real {@code ferry} command: keys from a file or the environment, one-line errors. */
class EncryptionCommandTest {
    static final String KEY = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    static final String OTHER = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";
    @TempDir
    Path tmp;

    private FerryProcess.Result ferry(Map<String, String> env, String... args) throws Exception {
        ProcessBuilder pb = FerryProcess.builder(List.of(), args);
        pb.environment().keySet().removeIf(k -> k.startsWith("FERRY_"));
        pb.environment().putAll(env);
        return FerryProcess.run(pb);
    }

    @Test
    void anImagePushedWithAKeyPullsOnlyWithItAndAWrongOrMissingKeyIsOneLine() throws Exception {
        Path image = Files.createDirectories(tmp.resolve("image"));
        byte[] bytes = new byte[2_000_000];
        new Random(3).nextBytes(bytes);
        Files.write(image.resolve("state"), bytes);
        String store = tmp.resolve("store").toString();
        Path keyFile = ownerOnly(Files.writeString(tmp.resolve("key"), KEY + "\n"));
        Path otherFile = ownerOnly(Files.writeString(tmp.resolve("other"), OTHER + "\n"));
        String[] where = {"--store", store, "--job", "j", "--generation", "1", "--rank", "0"};

        FerryProcess.Result push = ferry(Map.of("FERRY_ENCRYPTION_KEY", KEY),
                concat(new String[]{"image", "push", image.toString()}, where));
        assertEquals(0, push.exit(), push.err());
        assertEquals(0, ferry(Map.of(), "snapshot", "commit", "--store", store, "--job", "j", "--generation", "1",
                "--ranks", "1").exit(), "the coordinator's commit needs no key");

        FerryProcess.Result none = ferry(Map.of(),
                concat(new String[]{"image", "pull", tmp.resolve("none").toString()}, where));
        assertNotEquals(0, none.exit());
        assertTrue(none.err().matches("ferry: generation 1 of job j is encrypted with key id [0-9a-f]{16}; no key is"
                + " configured: set encryption.key-file or FERRY_ENCRYPTION_KEY\n"), none.err());
        FerryProcess.Result wrong = ferry(Map.of(),
                concat(new String[]{"image", "pull", tmp.resolve("wrong").toString(),
                "--set", "encryption.key-file=" + otherFile}, where));
        assertNotEquals(0, wrong.exit());
        assertTrue(wrong.err()
                .matches("ferry: generation 1 of job j is encrypted with key id [0-9a-f]{16}; the configured"
                + " key has id [0-9a-f]{16} \\(a key of before a rotation goes in encryption.previous-key-files\\)\n"),
                wrong.err());
        // A rotation: the other key current, the first kept as a previous key; the generation it sealed pulls,
        // and `store ls` shows which key each generation is sealed with.
        FerryProcess.Result rotated = ferry(Map.of(),
                concat(new String[]{"image", "pull", tmp.resolve("rotated").toString(),
                "--set", "encryption.key-file=" + otherFile, "--set", "encryption.previous-key-files=" + keyFile},
                where));
        assertEquals(0, rotated.exit(), rotated.err());
        assertEquals(-1, Files.mismatch(image.resolve("state"), tmp.resolve("rotated/state")));
        FerryProcess.Result ls = ferry(Map.of(), "store", "ls", store);
        assertTrue(ls.out().matches("(?s).*j\\s+1\\s+1 established\\s+\\S+ \\S+\\s+[0-9a-f]{16}\n.*"), ls.out());
        assertFalse(Files.exists(tmp.resolve("none")) || Files.exists(tmp.resolve("wrong")));

        FerryProcess.Result right = ferry(Map.of(), concat(new String[]{"image", "pull", tmp.resolve("back").toString(),
                "--set", "encryption.key-file=" + keyFile}, where));
        assertEquals(0, right.exit(), right.err());
        assertEquals(-1, Files.mismatch(image.resolve("state"), tmp.resolve("back/state")));
        FerryProcess.Result verify = ferry(Map.of("FERRY_ENCRYPTION_KEY_FILE", keyFile.toString()), "store", "verify",
                store);
        assertEquals(0, verify.exit(), verify.out() + verify.err());
        FerryProcess.Result blind = ferry(Map.of(), "store", "verify", store, "--repair");
        assertNotEquals(0, blind.exit());
        assertTrue(blind.err().startsWith("ferry: cannot verify the store: ") && blind.err().endsWith(
                "set encryption.key-file or FERRY_ENCRYPTION_KEY\n") && blind.err().lines().count() == 1, blind.err());
        try (var s = Files.walk(tmp.resolve("store"))) {
            assertTrue(s.noneMatch(p -> p.toString().contains("quarantine")), "a verify without the key moves nothing");
        }
    }

    @Test
    void aKeyFileOfTheWrongLengthIsOneLineNamingItAndConfigShowHidesTheKey() throws Exception {
        Path bad = ownerOnly(Files.writeString(tmp.resolve("bad.key"), KEY.substring(0, 40)));
        Path image = Files.createDirectories(tmp.resolve("image"));
        FerryProcess.Result push = ferry(Map.of(), "image", "push", image.toString(), "--store",
                tmp.resolve("s").toString(),
                "--job", "j", "--generation", "1", "--rank", "0", "--set", "encryption.key-file=" + bad);
        assertNotEquals(0, push.exit());
        assertEquals("ferry: encryption.key-file=" + bad
                + ": expected the 32-byte key as 64 hex digits, found 40 characters\n", push.err());

        FerryProcess.Result show = ferry(Map.of("FERRY_ENCRYPTION_KEY", KEY), "config", "show", "--set",
                "encryption.key-file=/etc/ferry/site.key");
        assertEquals(0, show.exit(), show.err());
        assertTrue(show.out().matches("(?s).*encryption\\.key-file *= /etc/ferry/site\\.key *# --set.*"), show.out());
        assertTrue(show.out().matches("(?s).*encryption\\.key *= \\(set, not shown\\) *# env FERRY_ENCRYPTION_KEY.*"),
                show.out());
        assertFalse(show.out().contains(KEY.substring(0, 16)), show.out());
    }

    @Test
    void theKeyIsNeverInARanksEnvironment() {
        Map<String, String> env = new HashMap<>(Map.of("FERRY_ENCRYPTION_KEY", KEY, "FERRY_JOB", "j"));
        LaunchSpec.removeSecrets(env);
        assertEquals(Map.of("FERRY_JOB", "j"), env);
        assertEquals(Map.of("encryption.key-file", "/k"), LaunchSpec.withoutSecrets(
                Map.of("encryption.key-file", "/k", "encryption.key", KEY)), "the path travels to agents, a key never");
    }

    private static String[] concat(String[] a, String[] b) {
        String[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /** Key files are refused unless only their owner may read them (as a site would keep them). */
    private static Path ownerOnly(Path f) throws IOException {
        return Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-------"));
    }
}
