package io.ferry.stores;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The counting wrapper keeps the store contract (the shared suite) and counts what succeeded. */
class CountingStoreTest extends StoreContractTest {
    @TempDir
    Path dir;

    @Override
    protected Store openStore() throws Exception {
        return new CountingStore(Stores.open(dir.toUri(), Map.of()));
    }

    @Test
    void countsObjectsAndBytesThatWentThrough() throws Exception {
        CountingStore s = (CountingStore) store;
        s.put("jobs/a/1", ByteBuffer.wrap(new byte[100]));
        s.put("jobs/a/2", ByteBuffer.wrap(new byte[20]));
        assertEquals(100, s.get("jobs/a/1").length);
        s.readRange("jobs/a/1", 10, new byte[5], 0, 5);
        assertEquals(20, s.read("jobs/a/2", new byte[8]), "the object's length, of which 8 bytes were read");
        assertEquals(new StoreStats(2, 120, 3, 113), s.stats());
    }

    @Test
    void aFailedCallCountsNothing() throws Exception {
        CountingStore s = (CountingStore) store;
        assertThrows(ObjectNotFoundException.class, () -> s.get("jobs/none"));
        assertThrows(IllegalArgumentException.class, () -> s.put("../bad", ByteBuffer.wrap(new byte[3])));
        assertEquals(StoreStats.NONE, s.stats());
    }
}
