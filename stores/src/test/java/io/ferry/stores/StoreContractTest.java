package io.ferry.stores;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The behaviour every {@link Store} must have; each store's test extends this against a real store. */
public abstract class StoreContractTest {
    protected Store store;

    protected abstract Store openStore() throws Exception;

    @BeforeEach
    void open() throws Exception {
        store = openStore();
    }

    @AfterEach
    void close() throws Exception {
        store.close();
    }

    private static ByteBuffer bytes(String s) {
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void putThenGetRoundTrips() throws Exception {
        store.put("a/b/c.obj", bytes("hello"));
        assertArrayEquals("hello".getBytes(StandardCharsets.UTF_8), store.get("a/b/c.obj"));
        assertTrue(store.exists("a/b/c.obj"));
    }

    @Test
    void putHonoursBufferPositionAndLimit() throws Exception {
        ByteBuffer b = ByteBuffer.wrap("xxhelloyy".getBytes(StandardCharsets.UTF_8), 2, 5);
        store.put("k", b);
        assertEquals("hello", new String(store.get("k"), StandardCharsets.UTF_8));
    }

    @Test
    void putReplacesAndIsIdempotent() throws Exception {
        store.put("k", bytes("one"));
        store.put("k", bytes("two"));
        store.put("k", bytes("two"));
        assertEquals("two", new String(store.get("k"), StandardCharsets.UTF_8));
        assertEquals(List.of("k"), store.list(""));
    }

    @Test
    void getAtMostReadsWholeObjectsUnderItsLimitAndRefusesLargerOnes() throws Exception {
        byte[] big = new byte[200_000]; // over the first read's 64 KiB: read in two
        new Random(7).nextBytes(big);
        store.put("big", ByteBuffer.wrap(big));
        store.put("small", bytes("hello"));
        store.put("empty", ByteBuffer.allocate(0));
        assertArrayEquals(big, store.getAtMost("big", 200_000));
        assertArrayEquals("hello".getBytes(StandardCharsets.UTF_8), store.getAtMost("small", 5));
        assertEquals(0, store.getAtMost("empty", 10).length);
        PermanentStoreException e = assertThrows(PermanentStoreException.class, () -> store.getAtMost("big", 199_999));
        assertTrue(e.getMessage().contains("is 200000 bytes, over the limit of 199999"), e.getMessage());
        assertThrows(PermanentStoreException.class, () -> store.getAtMost("small", 4),
                "also under the first read's size");
        assertThrows(ObjectNotFoundException.class, () -> store.getAtMost("nope", 10));
    }

    @Test
    void missingObjectIsNotFound() {
        assertThrows(ObjectNotFoundException.class, () -> store.get("nope"));
        assertThrows(ObjectNotFoundException.class, () -> store.read("nope", new byte[4]));
    }

    @Test
    void readReportsFullLengthOfLargerObjects() throws Exception {
        store.put("k", bytes("0123456789"));
        byte[] small = new byte[4];
        assertEquals(10, store.read("k", small));
        assertEquals("0123", new String(small, StandardCharsets.UTF_8));
        byte[] big = new byte[64];
        assertEquals(10, store.read("k", big));
    }

    @Test
    void readRangeReadsExactlyTheBytesAskedForAndRefusesToReadPastTheEnd() throws Exception {
        byte[] data = new byte[70_000];
        new Random(7).nextBytes(data);
        store.put("pack/p1", ByteBuffer.wrap(data));
        byte[] dst = new byte[5_010];
        store.readRange("pack/p1", 61_234, dst, 10, 5_000);
        assertArrayEquals(Arrays.copyOfRange(data, 61_234, 66_234),
                Arrays.copyOfRange(dst, 10, 5_010));
        assertEquals(0, dst[0]);
        store.readRange("pack/p1", 0, dst, 0, 1);
        assertEquals(data[0], dst[0]);
        assertThrows(PermanentStoreException.class, () -> store.readRange("pack/p1", 69_990, dst, 0, 20));
        assertThrows(ObjectNotFoundException.class, () -> store.readRange("pack/none", 0, dst, 0, 4));
        assertEquals(70_000, store.size("pack/p1"));
        assertThrows(ObjectNotFoundException.class, () -> store.size("pack/none"));
    }

    @Test
    void listFiltersByPrefixAndSorts() throws Exception {
        store.put("x/2", bytes("b"));
        store.put("x/1", bytes("a"));
        store.put("y/1", bytes("c"));
        store.put("x1", bytes("d"));
        assertEquals(List.of("x/1", "x/2"), store.list("x/"));
        assertEquals(List.of("x/1", "x/2", "x1", "y/1"), store.list(""));
        assertEquals(List.of(), store.list("z/"));
    }

    @Test
    void deleteIsIdempotent() throws Exception {
        store.put("k", bytes("v"));
        store.delete("k");
        store.delete("k");
        assertFalse(store.exists("k"));
    }

    /**
     * Every call that takes a key refuses an unsafe one with {@link IllegalArgumentException}, and
     * before any I/O: a put has not read a byte of its data, and nothing shows up in the store
     * (nor, for a store on the local file system, beside it, where {@code ../x} would land).
     */
    @Test
    void unsafeKeysAreRefusedBeforeAnyIo() throws Exception {
        store.put("a/b", bytes("there")); // a real object for the unsafe keys to reach for
        Path outside = "file".equals(store.uri().getScheme())
                ? Path.of(store.uri()).getParent() : null;
        List<String> besideBefore = outside == null ? List.of() : listing(outside);
        for (String k : new String[]{"../x", "a/../b", "/abs", "", "a//b", ".hidden", "a/.tmp", "a/b/../b"}) {
            ByteBuffer data = bytes("v");
            assertThrows(IllegalArgumentException.class, () -> store.put(k, data), k);
            assertEquals(0, data.position(), "the put of " + k + " read its data");
            assertThrows(IllegalArgumentException.class, () -> store.get(k), k);
            assertThrows(IllegalArgumentException.class, () -> store.getAtMost(k, 10), k);
            assertThrows(IllegalArgumentException.class, () -> store.read(k, new byte[4]), k);
            assertThrows(IllegalArgumentException.class, () -> store.readRange(k, 0, new byte[1], 0, 1), k);
            assertThrows(IllegalArgumentException.class, () -> store.exists(k), k);
            assertThrows(IllegalArgumentException.class, () -> store.size(k), k);
            assertThrows(IllegalArgumentException.class, () -> store.delete(k), k);
        }
        assertEquals(List.of("a/b"), store.list(""));
        assertEquals("there", new String(store.get("a/b"), StandardCharsets.UTF_8),
                "a refused delete of a/../b deleted nothing");
        if (outside != null) {
            assertEquals(besideBefore, listing(outside), "nothing written beside the store's directory");
            assertFalse(Files.exists(Path.of("/abs")));
        }
    }

    private static List<String> listing(Path dir) throws IOException {
        try (var s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void concurrentWritersOfOneKeyLeaveOneWholeObject() throws Exception {
        byte[] payload = new byte[1 << 20];
        Arrays.fill(payload, (byte) 7);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                fs.add(pool.submit(() -> {
                    store.put("chunks/same", ByteBuffer.wrap(payload));
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }
        assertArrayEquals(payload, store.get("chunks/same"));
        assertEquals(List.of("chunks/same"), store.list("chunks/"));
    }
}
