package io.ferry.agent;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The agent's control socket against real peers: its own user's processes, another user's, a second HELLO. */
class ControlServerIT {
    @TempDir
    Path tmp;

    /** Waits for the server to close {@code ch}: a read that ends (-1) or a reset. */
    private static boolean closedByServer(SocketChannel ch) throws Exception {
        ch.configureBlocking(true);
        try {
            return ch.read(ByteBuffer.allocate(64)) < 0;
        } catch (IOException reset) {
            return true;
        }
    }

    @Test
    void aSecondHelloForAConnectedRankCannotTakeItsChannel() throws Exception {
        Process sleeper = new ProcessBuilder("sleep", "60").start();
        RankProcess rank = new RankProcess(0, sleeper, tmp.resolve("ckpt"), "USR2");
        try (ControlServer server = new ControlServer(tmp.resolve("s.sock"), r -> r == 0 ? rank : null, (r, f) -> {})) {
            try (SocketChannel first = SocketChannel.open(StandardProtocolFamily.UNIX);
                 SocketChannel second = SocketChannel.open(StandardProtocolFamily.UNIX)) {
                first.connect(UnixDomainSocketAddress.of(server.path()));
                first.write(ByteBuffer.wrap("HELLO 0\n".getBytes(StandardCharsets.US_ASCII)));
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (!rank.socketMode() && System.nanoTime() < deadline) {
                    Thread.sleep(10);
                }
                assertTrue(rank.socketMode());
                second.connect(UnixDomainSocketAddress.of(server.path()));
                second.write(ByteBuffer.wrap("HELLO 0\n".getBytes(StandardCharsets.US_ASCII)));
                assertTrue(closedByServer(second), "the second HELLO 0 is dropped");
                assertTrue(first.isOpen());
                first.configureBlocking(false);
                assertEquals(0, first.read(ByteBuffer.allocate(8)),
                        "the first channel is still served (open, nothing to read)");
            }
        } finally {
            sleeper.destroyForcibly();
        }
    }

    @Test
    void aProcessOfAnotherUserIsRefusedByItsKernelCredentials() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root to run a client as another user");
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/setpriv")) && Files.isExecutable(Path.of("/usr/bin/python3")),
                "needs setpriv and python3");
        Path dir = tmp.resolve("open");
        Files.createDirectories(dir);
        PrintStream err = System.err;
        ByteArrayOutputStream said = new ByteArrayOutputStream();
        try (ControlServer server = new ControlServer(dir.resolve("s.sock"), r -> null, (r, f) -> {})) {
            // As a site that loosened the modes would: now uid 65534 can connect at all.
            Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
            Files.setPosixFilePermissions(server.path(), PosixFilePermissions.fromString("rw-rw-rw-"));
            System.setErr(new PrintStream(said, true, StandardCharsets.UTF_8));
            // The agent may close before the HELLO is sent (a broken pipe) or after (an end, or a reset).
            String client = "import socket,sys\ns=socket.socket(socket.AF_UNIX)\ns.connect(sys.argv[1])\n"
                    + "try:\n  s.sendall(b'HELLO 0\\n')\n  print('closed' if s.recv(64)==b'' else 'answered')\n"
                    + "except (ConnectionResetError, BrokenPipeError):\n  print('closed')\n";
            Process p = new ProcessBuilder("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                    "/usr/bin/python3", "-c", client, server.path().toString()).redirectErrorStream(true).start();
            assertTrue(p.waitFor(20, TimeUnit.SECONDS));
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, p.exitValue(), out);
            assertEquals("closed", out.trim());
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (!said.toString(StandardCharsets.UTF_8).contains("SO_PEERCRED") && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
        } finally {
            System.setErr(err);
        }
        String log = said.toString(StandardCharsets.UTF_8);
        assertTrue(log.contains("is not of the agent's user (root): refused (SO_PEERCRED)"), log);
    }
}
