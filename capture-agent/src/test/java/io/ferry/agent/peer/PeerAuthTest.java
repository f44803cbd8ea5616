package io.ferry.agent.peer;

import io.ferry.model.ImageRef;
import io.ferry.model.PeerAddresses;
import io.ferry.staging.LocalCache;
import io.ferry.staging.Staging;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A real peer server requiring the agents' secret, against real peer clients with, without and with a wrong one. */
class PeerAuthTest {
    @TempDir
    Path tmp;

    private PeerAuth secret(String name, String text) throws Exception {
        Path f = tmp.resolve(name);
        Files.writeString(f, text + "\n");
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-------"));
        return PeerAuth.fromFile(f);
    }

    private Path image(String name) throws Exception {
        Path dir = Files.createDirectories(tmp.resolve(name));
        Files.writeString(dir.resolve("state"), "rank state " + name);
        return dir;
    }

    @Test
    void onlyAPeerProvingTheSecretPutsGetsOrAsks() throws Exception {
        LocalCache cache = Staging.localCache(tmp.resolve("n1/cache"));
        PeerAuth right = secret("right", "0123456789abcdef-the-agents-secret");
        try (PeerServer server = new PeerServer(new InetSocketAddress("127.0.0.1", 0), cache, right)) {
            PeerAddresses.Peer n1 = PeerAddresses.parse("n1=" + server.address()).get(0);
            ImageRef ref = new ImageRef("job", 3, 0);

            IOException none = assertThrows(IOException.class,
                    () -> PeerClient.put(n1, ref, image("a"), PeerAuth.NONE));
            assertFalse(Files.isDirectory(cache.imageDir(ref)),
                    "nothing planted without the secret: " + none.getMessage());
            IOException ask = assertThrows(IOException.class, () -> PeerClient.has(n1, ref, PeerAuth.NONE));
            assertTrue(ask.getMessage().contains("requires peer authentication: give this agent peer.secret-file"),
                    ask.getMessage());

            PeerAuth wrong = secret("wrong", "0123456789abcdef-not-the-secret");
            IOException bad = assertThrows(IOException.class, () -> PeerClient.put(n1, ref, image("b"), wrong));
            assertTrue(bad.getMessage().contains("n1 refused this agent")
                    && bad.getMessage().contains("peer authentication failed"),
                    bad.getMessage());
            assertFalse(Files.isDirectory(cache.imageDir(ref)));

            assertTrue(PeerClient.put(n1, ref, image("c"), right) > 0);
            assertEquals("rank state c", Files.readString(cache.imageDir(ref).resolve("state")));
            assertTrue(PeerClient.has(n1, ref, right).isPresent());
            Path fetched = tmp.resolve("fetched");
            assertThrows(IOException.class, () -> PeerClient.get(n1, ref, fetched, wrong));
            assertFalse(Files.exists(fetched), "nothing read with a wrong secret");
            assertTrue(PeerClient.get(n1, ref, fetched, right));
            assertEquals("rank state c", Files.readString(fetched.resolve("state")));
        }
    }

    @Test
    void aRequestWithoutTheHandshakeOrAForgedProofGetsNothingButAChallenge() throws Exception {
        LocalCache cache = Staging.localCache(tmp.resolve("n1/cache"));
        Files.createDirectories(cache.imageDir(new ImageRef("job", 1, 0)));
        try (PeerServer server = new PeerServer(new InetSocketAddress("127.0.0.1", 0), cache,
                secret("s", "0123456789abcdef-the-agents-secret"))) {
            String[] hp = server.address().split(":");
            for (String first : new String[]{"FERRY-PEER/1 HAS job 1 0",
                    PeerAuth.MAGIC + " PROOF " + "ab".repeat(32) + " "
                    + "cd".repeat(32)}) {
                try (Socket s = new Socket(hp[0], Integer.parseInt(hp[1]))) {
                    s.setSoTimeout(10_000);
                    OutputStream out = s.getOutputStream();
                    InputStream in = s.getInputStream();
                    out.write((first + "\n").getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    String answer = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
                    assertTrue(answer.startsWith(PeerAuth.MAGIC + " CHALLENGE "), answer);
                    assertTrue(answer.contains("ERR peer authentication failed"), answer);
                    assertFalse(answer.contains("YES"), "served without the secret: " + answer);
                }
            }
        }
    }

    @Test
    void aSecretFileOthersMayReadOrTooShortIsRefused() throws Exception {
        Path open = tmp.resolve("open");
        Files.writeString(open, "0123456789abcdef-long-enough");
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rw-r--r--"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PeerAuth.fromFile(open));
        assertTrue(e.getMessage().contains("peer.secret-file") && e.getMessage().contains("chmod 600"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> secret("short", "too-short"));
        assertTrue(e.getMessage().contains("at least 16 characters"), e.getMessage());
        assertFalse(secret("ok", "0123456789abcdef-long-enough").toString().contains("0123"));
    }
}
