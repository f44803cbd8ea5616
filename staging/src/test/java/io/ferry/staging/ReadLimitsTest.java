package io.ferry.staging;

import io.ferry.model.ImageRef;
import io.ferry.stores.ObjectNotFoundException;
import io.ferry.stores.PermanentStoreException;
import io.ferry.stores.Store;
import io.ferry.stores.Stores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Objects over what Ferry writes of their kind are refused by size, before they are read whole. */
class ReadLimitsTest {
    @TempDir
    Path tmp;

    @Test
    void anOversizedMarkerOrMovesObjectIsRefusedWithItsSize() throws Exception {
        try (Store store = Stores.open(tmp.resolve("store").toUri(), Map.of())) {
            Repository repo = new Repository(store, Clock.systemUTC());
            store.put(Repository.markerKey("j", 0), ByteBuffer.allocate(ReadLimits.MARKER + 1));
            PermanentStoreException e = assertThrows(PermanentStoreException.class, () -> repo.readMarker("j", 0));
            assertTrue(e.getMessage()
                    .contains("is " + (ReadLimits.MARKER + 1) + " bytes, over the limit of " + ReadLimits.MARKER),
                    e.getMessage());
            assertThrows(PermanentStoreException.class, () -> repo.committed("j", 0));
            // Within the limit it is read, and refused for what it says (not a marker), as before.
            store.put(Repository.markerKey("j", 1), ByteBuffer.wrap("not a marker".getBytes()));
            Exception bad = assertThrows(Exception.class, () -> repo.readMarker("j", 1));
            assertTrue(!(bad instanceof PermanentStoreException), bad.toString());
            // The manifest's limit is read the same way (not written here: it is 1 GiB).
            assertThrows(ObjectNotFoundException.class,
                    () -> repo.readManifest(new ImageRef("j", 0, 0)));
        }
    }
}
