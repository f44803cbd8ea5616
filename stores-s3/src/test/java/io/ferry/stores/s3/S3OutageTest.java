package io.ferry.stores.s3;

import io.ferry.stores.ObjectNotFoundException;
import io.ferry.stores.Resilience;
import io.ferry.stores.Store;
import io.ferry.stores.StoreHealth;
import io.ferry.stores.Stores;
import io.ferry.stores.TransientStoreException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Retries and the circuit breaker against a real S3 server that goes away and comes back. */
class S3OutageTest {
    /** Short waits; the breaker judges the last 20 calls, once it has seen 5. */
    private static final Resilience FAST = new Resilience(3, Duration.ofMillis(20), Duration.ofMillis(80), 0.5,
            50f, 20, Duration.ofMillis(500), 10, 64L << 20);

    @TempDir
    Path dir;
    S3ProxyServer server;
    Store store;

    @BeforeEach
    void start() throws Exception {
        server = new S3ProxyServer(dir).bucket("bkt");
        store = Stores.open(URI.create("s3://bkt/p"), server.options(), FAST);
    }

    @AfterEach
    void stop() throws Exception {
        store.close();
        server.close();
    }

    @Test
    void unreachableStoreIsRetriedWithBackoffAndCounted() throws Exception {
        server.stop();
        TransientStoreException e = assertThrows(TransientStoreException.class,
                () -> store.put("k", ByteBuffer.wrap(new byte[]{1})));
        assertTrue(e.getMessage().contains("cannot write k"), e.getMessage());
        StoreHealth h = store.health();
        assertEquals(2, h.retries(), "3 attempts = 2 retries: " + h);
        assertEquals(1, h.failed());

        server.start();
        putUntilUp("k", new byte[]{1});
        assertArrayEquals(new byte[]{1}, store.get("k"));
    }

    private void putUntilUp(String key, byte[] value) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (true) {
            try {
                store.put(key, ByteBuffer.wrap(value));
                return;
            } catch (TransientStoreException stillDown) {
                assertTrue(System.nanoTime() < deadline, "the store never came back: " + store.health());
                Thread.sleep(100);
            }
        }
    }

    @Test
    void notFoundIsAnAnswerNotAnOutage() throws Exception {
        assertThrows(ObjectNotFoundException.class, () -> store.get("nope"));
        StoreHealth h = store.health();
        assertEquals(0, h.retries());
        assertEquals(0, h.failed());
    }

    @Test
    void circuitOpensWhileTheStoreIsDownFailsFastThenClosesWhenItIsBack() throws Exception {
        server.stop();
        for (int i = 0; i < 3; i++) {
            assertThrows(TransientStoreException.class, () -> store.put("k", ByteBuffer.wrap(new byte[1])));
        }
        assertEquals("OPEN", store.health().circuit());
        long before = store.health().retries();
        TransientStoreException fast = assertThrows(TransientStoreException.class,
                () -> store.put("k", ByteBuffer.wrap(new byte[1])));
        assertTrue(fast.getMessage().contains("considered down"), fast.getMessage());
        assertEquals(before, store.health().retries(), "an open circuit does not touch the store");
        assertTrue(store.health().rejected() >= 1);

        server.start();
        putUntilUp("k", new byte[]{2});
        putUntilUp("k2", new byte[]{3});
        for (int i = 0; i < 5; i++) {
            store.get("k2"); // the trial calls that let the breaker judge the store healthy
        }
        assertEquals("CLOSED", store.health().circuit());
        assertArrayEquals(new byte[]{2}, store.get("k"));
    }
}
