package io.ferry.agent;

import io.ferry.model.Names;
import io.ferry.model.OwnerOnly;
import org.junit.jupiter.api.Test;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The agent's control socket: in this user's own directory, under a name any job id fits in. */
class ControlSocketTest {
    @Test
    void theLongestJobIdGetsASocketItCanBind() throws Exception {
        String longest = "j".repeat(100) + "-0123456789abcdef.x_y-" + "z".repeat(6); // 128 characters, a valid id
        assertEquals(128, longest.length());
        Names.requireJob(longest);
        Path dir = OwnerOnly.privateRuntimeDir(System.getenv());
        Path socket = dir.resolve(ControlServer.socketName(longest, 4_194_304L));
        assertTrue(socket.toString().getBytes(StandardCharsets.UTF_8).length <= 107,
                socket.toString());
        try (ServerSocketChannel ch = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            ch.bind(UnixDomainSocketAddress.of(socket)); // before: /tmp/ferry-<128 characters>-<pid>.sock did not fit
        } finally {
            Files.deleteIfExists(socket);
        }
        assertEquals("ferry-short-7.sock", ControlServer.socketName("short", 7), "a short id stays readable");
        assertNotEquals(ControlServer.socketName(longest, 7), ControlServer.socketName(longest.replace('z', 'y'), 7),
                "two long ids alike in their first 32 characters get different sockets");
    }
}
