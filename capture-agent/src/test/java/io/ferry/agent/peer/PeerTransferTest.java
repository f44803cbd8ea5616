package io.ferry.agent.peer;

import io.ferry.agent.RestartSource;
import io.ferry.model.ImageRef;
import io.ferry.model.PeerAddresses;
import io.ferry.staging.LocalCache;
import io.ferry.staging.Progress;
import io.ferry.staging.Staging;
import io.ferry.staging.StagingConfig;
import io.ferry.staging.StagingPipeline;
import io.ferry.stores.Store;
import io.ferry.stores.Stores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Two nodes' caches on loopback, each with its real peer server: partner copies and restarts from a peer. */
class PeerTransferTest {
    @TempDir
    Path tmp;

    private static PeerAddresses.Peer peer(String node, PeerServer s) {
        return PeerAddresses.parse(node + "=" + s.address()).get(0);
    }

    private static byte[] image(Path dir, long seed) throws Exception {
        Files.createDirectories(dir.resolve("sub"));
        byte[] big = new byte[(5 << 20) + 123]; // two chunks, the last one short
        new Random(seed).nextBytes(big);
        Files.write(dir.resolve("sub/state.bin"), big);
        Files.writeString(dir.resolve("small"), "42");
        Files.setPosixFilePermissions(dir.resolve("small"), PosixFilePermissions.fromString("rwxr-x---"));
        Files.createSymbolicLink(dir.resolve("link"), Path.of("small"));
        return big;
    }

    @Test
    void aPartnerCopyLandsFsyncedInThePartnersCacheAndARestartThereOrElsewhereUsesItVerified() throws Exception {
        LocalCache n1 = Staging.localCache(tmp.resolve("n1/cache"));
        LocalCache n2 = Staging.localCache(tmp.resolve("n2/cache"));
        LocalCache n3 = Staging.localCache(tmp.resolve("n3/cache"));
        ImageRef ref = new ImageRef("job", 3, 5);
        byte[] big = image(n1.imageDir(ref), 11);
        try (PeerServer s2 = new PeerServer(new InetSocketAddress("127.0.0.1", 0), n2);
             PeerServer s1 = new PeerServer(new InetSocketAddress("127.0.0.1", 0), n1);
             Store store = Stores.open(tmp.resolve("store").toUri(), Map.of());
             StagingPipeline pipeline = Staging.pipeline(store, StagingConfig.defaults(), Clock.systemUTC())) {
            pipeline.push(n1.imageDir(ref), ref, Progress.NONE);
            for (int r = 0; r < 5; r++) { // the job's other ranks (empty images), so that generation 3 can be committed
                Path other = Files.createDirectories(tmp.resolve("others/" + r));
                pipeline.push(other, new ImageRef("job", 3, r), Progress.NONE);
            }
            pipeline.repository().commitSnapshot("job", 3, 6);

            long bytes = PeerClient.put(peer("n2", s2), ref, n1.imageDir(ref));
            assertEquals(big.length + 2, bytes);
            assertTrue(n2.isPartnerCopy(ref));
            assertFalse(n1.isPartnerCopy(ref));
            assertArrayEquals(big, Files.readAllBytes(n2.imageDir(ref).resolve("sub/state.bin")));
            assertEquals("rwxr-x---",
                    PosixFilePermissions.toString(Files.getPosixFilePermissions(n2.imageDir(ref).resolve("small"))));
            assertEquals(Path.of("small"), Files.readSymbolicLink(n2.imageDir(ref).resolve("link")));
            try (var left = Files.list(n2.imageDir(ref).getParent())) {
                assertTrue(left.noneMatch(p -> p.getFileName().toString().startsWith(".incoming")),
                        "nothing half-received is left");
            }
            assertEquals(big.length + 2, PeerClient.has(peer("n2", s2), ref).orElseThrow());
            assertTrue(PeerClient.has(peer("n2", s2), new ImageRef("job", 4, 5)).isEmpty());

            // n1 is lost: rank 5 restarts on n2, from the partner copy n2 holds.
            assertEquals("partner", RestartSource.materialise(pipeline, n2, ref, tmp.resolve("n2/restart/5")));
            // ... or on n3, which asks n1 (gone: nothing listens where it was), then n2, over the network; the copy
            // is verified there. (Port 1, not n1's old port: on loopback a connection to a just-closed ephemeral
            // port can connect to itself, and then waits for an answer.)
            s1.close();
            Path on3 = tmp.resolve("n3/restart/5");
            assertEquals("partner", RestartSource.materialise(pipeline, n3, ref, on3, RestartSource.Sources.none()
                    .peers(List.of(new PeerAddresses.Peer("n1", "127.0.0.1", 1), peer("n2", s2)))));
            assertArrayEquals(big, Files.readAllBytes(on3.resolve("sub/state.bin")));
            assertTrue(RestartSource.plan(pipeline, n3, ref, List.of(peer("n2", s2))).startsWith("partner (in n2"));
            assertEquals(big.length + 2, s2.bytesReceived(), "the partner copy came in");
            for (int i = 0; i < 100 && s2.bytesSent() == 0; i++) {
                Thread.sleep(50); // counted by the server once its last byte is written, maybe after n3 read it
            }
            assertEquals(big.length + 2, s2.bytesSent(), "and went out once, to n3");

            // A partner copy that no longer verifies is passed over for the store.
            try (var f = new RandomAccessFile(n2.imageDir(ref).resolve("sub/state.bin").toFile(), "rw")) {
                f.seek(4096);
                f.write(f.read() ^ 1);
            }
            assertEquals("remote", RestartSource.materialise(pipeline, n3, ref, on3,
                    RestartSource.Sources.none().peers(List.of(peer("n2", s2)))));
            assertArrayEquals(big, Files.readAllBytes(on3.resolve("sub/state.bin")));
            assertEquals("remote", RestartSource.tier(pipeline, n3, ref, List.of()));
        }
    }

    @Test
    void retentionDropsPartnerCopiesWithTheirGenerationAndIsNotHeldUpByThem() throws Exception {
        LocalCache n2 = Staging.localCache(tmp.resolve("n2/cache"));
        try (PeerServer s2 = new PeerServer(new InetSocketAddress("127.0.0.1", 0), n2)) {
            for (long g = 1; g <= 3; g++) {
                Path src = tmp.resolve("src" + g);
                image(src, g);
                PeerClient.put(peer("n2", s2), new ImageRef("job", g, 7), src);
                ImageRef own = new ImageRef("job", g, 0); // n2's own rank, staged
                Files.createDirectories(n2.imageDir(own));
                n2.markStaged(own);
            }
        }
        assertEquals(List.of(1L), n2.applyRetention("job", 2, g -> g == 3));
        assertEquals(List.of(2L, 3L), n2.generations("job"));
        assertTrue(n2.usage("job").jobBytes() > 2L * (5 << 20), "partner copies count in the cache-full forecast");
    }

    @Test
    void aHostileStreamCannotWriteOutsideTheCacheAndLeavesNothing() throws Exception {
        LocalCache n2 = Staging.localCache(tmp.resolve("n2/cache"));
        try (PeerServer s2 = new PeerServer(new InetSocketAddress("127.0.0.1", 0), n2)) {
            for (String path : List.of("../../../escaped", "/etc/escaped", "a/../../escaped")) {
                assertEquals("ERR", answer(s2, "FERRY-PEER/1 PUT job 1 0", path).split(" ")[0], path);
            }
            // A link first, then a file through it: refused too.
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            DataOutputStream d = new DataOutputStream(b);
            d.writeByte('L');
            d.writeUTF("l");
            d.writeUTF(tmp.toString());
            d.writeByte('F');
            d.writeUTF("l/escaped");
            d.writeInt(0644);
            d.writeLong(0);
            d.writeLong(1);
            d.writeByte('x');
            d.writeByte('E');
            assertTrue(send(s2, "FERRY-PEER/1 PUT job 1 0", b.toByteArray()).startsWith("ERR"));
            assertTrue(send(s2, "FERRY-PEER/1 PUT ../job 1 0", new byte[] {'E'}).startsWith("ERR bad peer request"));
            assertTrue(send(s2, "GET / HTTP/1.0", new byte[0]).startsWith("ERR not a peer request"));
        }
        assertFalse(Files.exists(tmp.resolve("escaped")));
        assertFalse(Files.exists(tmp.resolve("n2/escaped")));
        assertFalse(Files.exists(n2.imageDir(new ImageRef("job", 1, 0))), "nothing installed");
        try (var left = Files.list(n2.imageDir(new ImageRef("job", 1, 0)).getParent())) {
            assertTrue(left.allMatch(p -> p.getFileName().toString().startsWith(".partner-")),
                    "no half-received directory left");
        }
    }

    private static String answer(PeerServer s, String request, String path) throws Exception {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        DataOutputStream d = new DataOutputStream(b);
        d.writeByte('F');
        d.writeUTF(path);
        d.writeInt(0644);
        d.writeLong(0);
        d.writeLong(1);
        d.writeByte('x');
        d.writeByte('E');
        return send(s, request, b.toByteArray());
    }

    private static String send(PeerServer s, String request, byte[] body) throws Exception {
        String[] hp = s.address().split(":");
        try (Socket c = new Socket(hp[0], Integer.parseInt(hp[1]))) {
            OutputStream out = c.getOutputStream();
            out.write((request + "\n").getBytes(StandardCharsets.UTF_8));
            out.write(body);
            out.flush();
            InputStream in = c.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
        }
    }
}
