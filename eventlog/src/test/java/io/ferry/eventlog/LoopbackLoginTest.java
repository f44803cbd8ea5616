package io.ferry.eventlog;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Where the loopback login is looked for, and which files are trusted: real files, real modes. */
class LoopbackLoginTest {
    @Test
    void theSessionsRuntimeDirectoryIsLookedInFirstThenTmp() throws Exception {
        int uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        assertEquals(List.of(Path.of("/run/user/7/ferry"), Path.of("/tmp/ferry-" + uid)),
                LoopbackLogin.candidates(Map.of("XDG_RUNTIME_DIR", "/run/user/7")));
        assertEquals(List.of(Path.of("/tmp/ferry-" + uid)), LoopbackLogin.candidates(Map.of()));
    }

    @Test
    void aLoginIsFoundForItsPortOnLoopbackOnlyAndOnlyWhileItIsTheOwnersAlone() throws Exception {
        // A port this test holds, so that no broker of another test JVM has its login file under it.
        try (ServerSocket held = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            publishedAndFound(held.getLocalPort());
        }
    }

    private static void publishedAndFound(int port) throws Exception {
        Path file = LoopbackLogin.publish(port, "secret-of-this-test");
        try {
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
            KafkaClientSettings found = LoopbackLogin.find("127.0.0.1:" + port).orElseThrow();
            assertTrue(found.settings().get("sasl.jaas.config").contains("password=\"secret-of-this-test\""));
            assertTrue(LoopbackLogin.find("localhost:" + port).isPresent(), "a name of loopback");
            assertTrue(LoopbackLogin.find("192.0.2.1:" + port).isEmpty(), "not loopback: a site's login applies");
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
            Path fallback = Path.of("/tmp", "ferry-" + Files.getAttribute(Path.of("/proc/self"), "unix:uid"),
                    file.getFileName().toString());
            if (!fallback.equals(file)) {
                Files.setPosixFilePermissions(fallback, PosixFilePermissions.fromString("rw-r--r--"));
            }
            assertTrue(LoopbackLogin.find("127.0.0.1:" + port).isEmpty(), "a file others can read is no login");
        } finally {
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
            LoopbackLogin.withdraw(file, "secret-of-this-test");
        }
        assertTrue(Files.notExists(file), "withdrawn");
    }
}
