package io.ferry.stores.s3;

import io.ferry.compression.ChunkFormat;
import io.ferry.compression.Codecs;
import io.ferry.compression.CorruptChunkException;
import io.ferry.compression.Digests;
import io.ferry.stores.ObjectNotFoundException;
import io.ferry.stores.PermanentStoreException;
import io.ferry.stores.ResilientStore;
import io.ferry.stores.Store;
import io.ferry.stores.StoreContractTest;
import io.ferry.stores.StoreException;
import io.ferry.stores.Stores;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The store conformance suite, and S3's own cases, against s3proxy on loopback. */
class S3StoreTest extends StoreContractTest {
    @TempDir
    static Path dir;
    static S3ProxyServer server;
    private static final AtomicInteger PREFIXES = new AtomicInteger();

    @BeforeAll
    static void startServer() throws Exception {
        server = new S3ProxyServer(dir.resolve("blobs")).bucket("ferry");
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    @Override
    protected Store openStore() throws Exception {
        // A fresh prefix per test: the suite expects an empty store.
        return Stores.open(URI.create("s3://ferry/t" + PREFIXES.incrementAndGet()), server.options());
    }

    @Test
    void remoteStoresComeWithTheResilienceLayer() {
        assertInstanceOf(ResilientStore.class, store);
        assertEquals("CLOSED", store.health().circuit());
    }

    @Test
    void largeObjectsGoUpInPartsAndReadBackWhole() throws Exception {
        Map<String, String> opts = new HashMap<>(server.options());
        opts.put("s3.multipart-threshold-mib", "5");
        opts.put("s3.part-size-mib", "5");
        byte[] big = new byte[12 << 20];
        new Random(7).nextBytes(big);
        try (Store s = Stores.open(URI.create("s3://ferry/multi" + PREFIXES.incrementAndGet()), opts)) {
            s.put("big", ByteBuffer.wrap(big));
            assertArrayEquals(big, s.get("big"));
            assertEquals(List.of("big"), s.list(""));
        }
    }

    @Test
    void aFailedMultipartUploadLeavesNothingUnderTheKey() throws Exception {
        Map<String, String> opts = new HashMap<>(server.options());
        opts.put("s3.multipart-threshold-mib", "5");
        opts.put("s3.part-size-mib", "5");
        URI uri = URI.create("s3://ferry/abort" + PREFIXES.incrementAndGet());
        // A real failure mid-upload: the network goes away for good once 7 MiB went up, past the
        // first 5 MiB part (a relay in front of the server, so that the cut cannot race the upload).
        try (CuttingTcpProxy relay = new CuttingTcpProxy(server.endpoint(), 7L << 20)) {
            opts.put("s3.endpoint", relay.endpoint().toString());
            try (S3Store cutOff = S3Store.open(uri, S3Settings.from(opts, Map.of()))) {
                assertThrows(StoreException.class,
                        () -> cutOff.put("half", ByteBuffer.allocate(64 << 20)));
            }
            assertTrue(relay.isCut(), "the upload failed because the network went away");
        }
        try (S3Store raw = S3Store.open(uri, S3Settings.from(server.options(), Map.of()))) {
            assertFalse(raw.exists("half"), "nothing under the key");
            assertThrows(ObjectNotFoundException.class, () -> raw.get("half"));
            assertEquals(List.of(), raw.list(""), "no part is listed as an object");
        }
    }

    @Test
    void missingBucketIsAPermanentClearError() {
        PermanentStoreException e = assertThrows(PermanentStoreException.class,
                () -> Stores.open(URI.create("s3://no-such-bucket/x"), server.options()));
        assertTrue(e.getMessage().contains("bucket 'no-such-bucket' does not exist"), e.getMessage());
    }

    @Test
    void wrongCredentialsAreAPermanentClearError() {
        Map<String, String> opts = new HashMap<>(server.options());
        opts.put("s3.secret-access-key", "wrong");
        PermanentStoreException e = assertThrows(PermanentStoreException.class,
                () -> Stores.open(URI.create("s3://ferry/x"), opts));
        assertTrue(e.getMessage().contains("403"), e.getMessage());
    }

    @Test
    void noCredentialsAnywhereIsAOneLineError() {
        Assumptions.assumeTrue(System.getenv("AWS_ACCESS_KEY_ID") == null
                && System.getenv("AWS_PROFILE") == null, "this machine has AWS credentials of its own");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Stores.open(URI.create("s3://ferry/x"), Map.of("s3.endpoint", server.endpoint().toString())));
        assertTrue(e.getMessage().startsWith("no S3 credentials: set s3.access-key-id"), e.getMessage());
    }

    @Test
    void badOptionsAreRefusedNamingTheKey() {
        Map<String, String> opts = new HashMap<>(server.options());
        opts.put("s3.part-size-mib", "2");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Stores.open(URI.create("s3://ferry/x"), opts));
        assertTrue(e.getMessage().contains("s3.part-size-mib"), e.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> Stores.open(URI.create("s3://ferry/x"), Map.of("s3.endpoint", "ftp://x")));
    }

    @Test
    void settingsFallBackToTheAwsEnvironment() {
        S3Settings s = S3Settings.from(Map.of(),
                Map.of("AWS_ENDPOINT_URL", "http://minio:9000", "AWS_REGION", "eu-west-3"));
        assertEquals(URI.create("http://minio:9000"), s.endpoint());
        assertEquals("eu-west-3", s.region());
        assertTrue(s.pathStyle(), "a site endpoint defaults to path-style");
        assertFalse(S3Settings.from(Map.of(), Map.of()).pathStyle(), "AWS defaults to virtual hosts");
    }

    /**
     * A chunk whose bytes rot on the server is read back as they are now, by every read call and
     * without an SDK error of its own, so Ferry's chunk check (CRC32C and SHA-256) is what
     * catches it, as it does on every store.
     */
    @Test
    void corruptedObjectIsReadBackAsStoredSoTheChunkCheckCatchesIt() throws Exception {
        byte[] raw = new byte[100_000];
        new Random(7).nextBytes(raw);
        ChunkFormat format = new ChunkFormat(Codecs.raw(), 1.0);
        byte[] chunk = new byte[format.maxObjectLength(raw.length)];
        int len = format.encode(raw, raw.length, chunk);
        chunk = Arrays.copyOf(chunk, len);
        byte[] sha = Digests.sha256(raw, 0, raw.length);
        String key = "c/" + Digests.hex(sha);
        store.put(key, ByteBuffer.wrap(chunk));
        byte[] out = new byte[raw.length];
        assertEquals(raw.length, ChunkFormat.decode(store.get(key), len, sha, out, key), "the chunk as written passes");

        byte[] rotten = chunk.clone();
        rotten[len / 2] ^= 0x10; // one bit, in the middle: the length stays
        try (Stream<Path> files = Files.walk(dir.resolve("blobs/ferry"))) {
            Path p = files.filter(f -> f.getFileName().toString().equals(Digests.hex(sha))).findFirst().orElseThrow();
            Files.write(p, rotten);
        }
        assertArrayEquals(rotten, store.get(key));
        assertArrayEquals(rotten, store.getAtMost(key, len));
        byte[] read = new byte[len];
        assertEquals(len, store.read(key, read));
        assertArrayEquals(rotten, read);
        byte[] range = new byte[64];
        store.readRange(key, len / 2 - 32, range, 0, 64);
        assertArrayEquals(Arrays.copyOfRange(rotten, len / 2 - 32, len / 2 + 32), range);
        CorruptChunkException e = assertThrows(CorruptChunkException.class,
                () -> ChunkFormat.decode(store.get(key), len, sha, new byte[raw.length], key));
        assertTrue(e.getMessage().contains(key) && e.getMessage().contains("CRC32C"), e.getMessage());
    }
}
