package io.ferry.eventlog;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class EmbeddedAuthTest {
    @TempDir
    Path tmp;

    private Path users(String text, String mode) throws Exception {
        Path f = tmp.resolve("users");
        Files.writeString(f, text);
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString(mode));
        return f;
    }

    @Test
    void anOwnerOnlyUsersFileIsRead() throws Exception {
        EmbeddedAuth a = EmbeddedAuth.fromUsersFile(users("# agents\nagent:pw-1:with-colon\n\nops:x\n", "rw-------"),
                Map.of());
        assertEquals(Map.of("agent", "pw-1:with-colon", "ops", "x"), a.users());
        assertEquals("SASL_PLAINTEXT", a.protocol());
        assertFalse(a.toString().contains("pw-1"), a.toString());
    }

    @Test
    void operatorsControlEveryJobAndTheLoopbackLoginIsOneOfThem() {
        EmbeddedAuth none = new EmbeddedAuth(Map.of("agents", "a", "alice", "b"), Map.of());
        assertFalse(none.owners());
        assertEquals(Set.of(), none.restricted(), "no operators named: nobody is restricted");
        assertFalse(none.with(LoopbackLogin.USER, "p").owners(), "the loopback login adds no owners");
        EmbeddedAuth owned = none.operatedBy(Set.of("agents")).with(LoopbackLogin.USER, "p");
        assertEquals(Set.of("agents", LoopbackLogin.USER), owned.operators());
        assertEquals(Set.of("alice"), owned.restricted());
        assertTrue(owned.toString().contains("operators=") && !owned.toString().contains("\"b\""), owned.toString());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> none.operatedBy(Set.of("carol")));
        assertTrue(e.getMessage().contains("'carol'"), e.getMessage());
    }

    @Test
    void aUsersFileOthersMayReadIsRefused() throws Exception {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> EmbeddedAuth.fromUsersFile(users("agent:pw\n", "rw-r--r--"), Map.of()));
        assertTrue(e.getMessage().contains("kafka.embedded.users-file") && e.getMessage().contains("chmod 600"),
                e.getMessage());
    }

    @Test
    void malformedLinesAndUnsafePasswordsAreRefusedWithoutShowingThem() throws Exception {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> EmbeddedAuth.fromUsersFile(users("agent:ok\nno-colon-here\n", "rw-------"), Map.of()));
        assertTrue(e.getMessage().endsWith(":2: expected NAME:PASSWORD"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> EmbeddedAuth.fromUsersFile(users("agent:pa\"ss\n", "rw-------"), Map.of()));
        assertFalse(e.getMessage().contains("pa\"ss"), e.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> EmbeddedAuth.fromUsersFile(users("# none\n", "rw-------"), Map.of()));
    }

    @Test
    void aKeystoreMakesTheListenerSaslSsl() {
        assertEquals("SASL_SSL",
                new EmbeddedAuth(Map.of("a", "b"), Map.of("ssl.keystore.location", "/k.p12")).protocol());
        assertThrows(IllegalArgumentException.class,
                () -> new EmbeddedAuth(Map.of(), Map.of("ssl.keystore.location", "/k")));
    }

    @Test
    void aBrokerBeyondLoopbackWithoutUsersIsRefusedBeforeItStarts() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> EmbeddedKafka.start(tmp.resolve("kafka"), EmbeddedKafka.Options.defaults().listen("0.0.0.0:0")));
        assertTrue(e.getMessage().contains("set kafka.embedded.users-file=PATH"), e.getMessage());
        assertFalse(Files.exists(tmp.resolve("kafka")), "nothing started");
        assertTrue(new HostPort("127.0.0.1", 1).loopbackOnly());
        assertTrue(new HostPort("localhost", 1).loopbackOnly());
        assertFalse(new HostPort("::", 1).loopbackOnly());
    }
}
