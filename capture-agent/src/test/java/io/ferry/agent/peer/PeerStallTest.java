package io.ferry.agent.peer;

import io.ferry.agent.peer.PeerAuth;
import io.ferry.model.ImageRef;
import io.ferry.model.PeerAddresses;
import io.ferry.staging.LocalCache;
import io.ferry.staging.Staging;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A partner copy never hangs on a peer that does not play along. On real loopback sockets:
 * idle connections that never authenticate do not hold the peer port's workers (they were queued
 * behind, for a minute each), and a partner whose port accepts but never reads (a process frozen
 * with SIGSTOP does exactly this: the kernel accepts, nobody reads, the buffers fill) fails the
 * copy at its deadline instead of blocking the writer, and the staging behind it, for ever.
 */
class PeerStallTest {
    @TempDir
    Path tmp;

    @Test
    void idleConnectionsDoNotHoldThePeerPortsWorkers() throws Exception {
        LocalCache cache = Staging.localCache(tmp.resolve("n1/cache"));
        try (PeerServer server = new PeerServer(new InetSocketAddress("127.0.0.1", 0), cache)) {
            int port = Integer.parseInt(server.address().substring(server.address().lastIndexOf(':') + 1));
            List<Socket> idle = new ArrayList<>();
            try {
                for (int i = 0; i < 6; i++) { // more than the 4 workers the port used to have, saying nothing
                    idle.add(new Socket("127.0.0.1", port));
                }
                PeerAddresses.Peer n1 = new PeerAddresses.Peer("n1", "127.0.0.1", port);
                long t0 = System.nanoTime();
                assertTrue(PeerClient.put(n1, new ImageRef("j", 0, 0), image("a", 1 << 16),
                        PeerAuth.NONE, Duration.ofSeconds(50)) > 0);
                double seconds = (System.nanoTime() - t0) / 1e9;
                // Queued behind the idle ones, it waited for their 60 s read timeout; a bound far from both.
                assertTrue(seconds < 30, "the copy waited " + seconds + " s behind idle connections");
            } finally {
                for (Socket s : idle) {
                    s.close();
                }
            }
        }
    }

    @Test
    void aPartnerThatNeverReadsFailsTheCopyAtItsDeadline() throws Exception {
        try (ServerSocket frozen = new ServerSocket(0, 8, InetAddress.getLoopbackAddress())) {
            Socket[] accepted = new Socket[1];
            Thread acceptor = new Thread(() -> {
                try {
                    accepted[0] = frozen.accept(); // taken, never read: the kernel's buffers fill and the writer blocks
                } catch (IOException ignored) {
                    // closed at the end
                }
            });
            acceptor.setDaemon(true);
            acceptor.start();
            PeerAddresses.Peer partner = new PeerAddresses.Peer("n2", "127.0.0.1", frozen.getLocalPort());
            Path big = image("big", 64 << 20); // far more than loopback's socket buffers hold
            long t0 = System.nanoTime();
            IOException e = assertThrows(IOException.class, () -> PeerClient.put(partner, new ImageRef("j", 0, 0), big,
                    PeerAuth.NONE, Duration.ofSeconds(2)));
            double seconds = (System.nanoTime() - t0) / 1e9;
            assertTrue(e.getMessage().contains("did not finish within 2 s"), e.getMessage());
            assertTrue(seconds < 20, "gave up after " + seconds + " s");
            if (accepted[0] != null) {
                accepted[0].close();
            }
        }
    }

    private Path image(String name, int bytes) throws IOException {
        Path dir = Files.createDirectories(tmp.resolve(name));
        byte[] b = new byte[bytes];
        new Random(7).nextBytes(b);
        Files.write(dir.resolve("state"), b);
        return dir;
    }
}
