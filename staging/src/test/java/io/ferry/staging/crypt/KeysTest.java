package io.ferry.staging.crypt;

import io.ferry.compression.CorruptChunkException;
import io.ferry.compression.Digests;
import io.ferry.model.ChunkId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Key files, the environment variable, derived keys and sealed records. */
class KeysTest {
    static final String HEX = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    @TempDir
    Path tmp;

    @Test
    void aKeyFileOfTheWrongLengthIsOneLineNamingTheFileAndNeverTheKey() throws Exception {
        Path f = tmp.resolve("short.key");
        ownerOnly(Files.writeString(f, HEX.substring(0, 62) + "\n"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Keys.resolve(Map.of("encryption.key-file", f.toString()), Map.of()));
        assertEquals("encryption.key-file=" + f + ": expected the 32-byte key as 64 hex digits, found 62 characters",
                e.getMessage());
        assertFalse(e.getMessage().contains(HEX.substring(0, 16)));
        Path b64 = tmp.resolve("base64.key");
        ownerOnly(Files.writeString(b64, "ABEiM0RVZneImaq7zN3u/wARIjNEVWZ3iJmqu8zd7v8="));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Keys.readFile(b64)).getMessage()
                .endsWith("found 44 characters"));
        Path missing = tmp.resolve("none");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Keys.readFile(missing)).getMessage()
                .startsWith("encryption.key-file=" + missing + ": cannot read the key file"));
        IllegalArgumentException env = assertThrows(IllegalArgumentException.class,
                () -> Keys.resolve(Map.of(), Map.of(Keys.VARIABLE, "zz" + HEX.substring(2))));
        assertEquals("environment variable FERRY_ENCRYPTION_KEY: expected the 32-byte key as 64 hex digits, found 64"
                + " characters that are not all hex digits", env.getMessage());
    }

    @Test
    void aKeyFileOthersMayReadIsRefusedNamingTheFix() throws Exception {
        Path f = Files.writeString(tmp.resolve("open.key"), HEX);
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-r--r--"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Keys.readFile(f));
        assertEquals("encryption.key-file=" + f + " is open to others (rw-r--r--): chmod 600 " + f, e.getMessage());
        ownerOnly(f);
        assertEquals(Keys.parse(HEX, "x").id(), Keys.readFile(f).id());
    }

    static Path ownerOnly(Path f) throws IOException {
        return Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-------"));
    }

    @Test
    void theFileAndTheVariableMustAgreeWhenBothAreSet() throws Exception {
        Path f = tmp.resolve("k");
        ownerOnly(Files.writeString(f, HEX));
        assertEquals(Keys.parse(HEX, "x").id(), Keys.resolve(Map.of("encryption.key-file", f.toString()),
                Map.of(Keys.VARIABLE, HEX.toUpperCase())).orElseThrow().id());
        String other = "1" + HEX.substring(1);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Keys.resolve(Map.of("encryption.key-file", f.toString()), Map.of(Keys.VARIABLE, other)));
        assertTrue(e.getMessage().contains("hold different keys") && !e.getMessage().contains(HEX), e.getMessage());
        assertEquals(Optional.empty(), Keys.resolve(Map.of("encryption.key-file", " "), Map.of()));
    }

    @Test
    void keyIdsAreStableSixteenHexDigitsAndTheKeyNeverPrints() {
        Keys k = Keys.parse(HEX, "x");
        assertTrue(k.id().matches("[0-9a-f]{16}"), k.id());
        assertEquals(k.id(), Keys.parse("  " + HEX + "\n", "y").id());
        assertNotEquals(k.id(), Keys.parse("1" + HEX.substring(1), "z").id());
        assertEquals("Keys[id " + k.id() + "]", k.toString());
    }

    @Test
    void aSealedRecordOpensOnlyUnderItsBlobsNameAndItsKey() throws Exception {
        BlobSealer s = new BlobSealer(Keys.parse(HEX, "x"));
        byte[] plain = "a record".getBytes();
        ChunkId id = s.name(plain, 0, plain.length);
        byte[] sealed = new byte[plain.length + BlobSealer.OVERHEAD];
        assertEquals(sealed.length, s.seal(id, plain, plain.length, sealed));
        byte[] again = new byte[sealed.length];
        s.seal(id, plain, plain.length, again);
        assertNotEquals(Arrays.toString(sealed), Arrays.toString(again),
                "a fresh nonce per record");
        byte[] out = new byte[plain.length];
        assertEquals(plain.length, s.open(id, sealed, 0, sealed.length, out, "r"));
        assertArrayEquals(plain, out);
        ChunkId other = s.name(new byte[]{1}, 0, 1);
        CorruptChunkException moved = assertThrows(CorruptChunkException.class,
                () -> s.open(other, sealed, 0, sealed.length, out, "r"));
        assertTrue(moved.getMessage().contains("AES-GCM tag mismatch"), moved.getMessage());
        BlobSealer wrong = new BlobSealer(Keys.parse("1" + HEX.substring(1), "y"));
        EncryptionKeyException key = assertThrows(EncryptionKeyException.class,
                () -> wrong.open(id, sealed, 0, sealed.length, out, "r"));
        assertTrue(key.getMessage().contains("key id " + Keys.parse(HEX, "x").id()), key.getMessage());
        sealed[9] ^= 1; // the key id is authenticated too: altered, it names no key and opens under none
        assertThrows(EncryptionKeyException.class, () -> s.open(id, sealed, 0, sealed.length, out, "r"));
        assertNotEquals(id, ChunkId.of(Digests.sha256(plain, 0, plain.length)));
    }
}
