package io.ferry.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HttpOptionsTest {
    @TempDir
    Path tmp;

    private HttpOptions withToken(String content, String mode) throws Exception {
        Path f = tmp.resolve("token");
        Files.writeString(f, content);
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString(mode));
        HttpOptions o = HttpOptions.at("127.0.0.1:0");
        o.tokenFile = f;
        return o;
    }

    @Test
    void anOwnerOnlyTokenFileIsReadAndTrimmed() throws Exception {
        assertEquals(Optional.of("abc123"), withToken("abc123\n", "rw-------").token());
        assertEquals(Optional.empty(), HttpOptions.at("off").token(), "no file: no token");
    }

    @Test
    void aTokenFileOthersCanReadIsRefusedWithTheFix() throws Exception {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> withToken("abc", "rw-r--r--").check());
        assertTrue(e.getMessage().contains("is open to others (rw-r--r--): chmod 600"), e.getMessage());
    }

    @Test
    void emptyOrMissingTokensAndBadAddressesAreOneLineErrors() throws Exception {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> withToken(" \n", "rw-------").token())
                .getMessage().contains("must hold one token"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> withToken("two words", "rw-------").token())
                .getMessage().contains("no spaces"));
        HttpOptions missing = HttpOptions.at("off");
        missing.tokenFile = tmp.resolve("nope");
        assertTrue(assertThrows(IllegalArgumentException.class, missing::token).getMessage().contains("no such file"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> HttpOptions.at("nohost").listen())
                .getMessage().contains("--http must be HOST:PORT"));
    }
}
