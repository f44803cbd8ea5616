package io.ferry.agent;

import io.ferry.staging.ImageCorruptException;
import io.ferry.stores.PermanentStoreException;
import io.ferry.stores.TransientStoreException;
import org.junit.jupiter.api.Test;

import java.io.IOException;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which restore failures mean "the store is away" (tried again) and which mean "the data is bad" (set aside). */
class RestoreErrorsTest {
    @Test
    void onlyATransientStoreErrorWithNothingAgainstTheDataIsTheStoreBeingAway() {
        TransientStoreException down = new TransientStoreException("store s3://b is considered down (circuit open)", null);
        assertTrue(JobOnNode.storeUnreachable(down));
        assertTrue(JobOnNode.storeUnreachable(new IOException("restart copy failed", down)), "wrapped by a worker");
        assertFalse(JobOnNode.storeUnreachable(new ImageCorruptException("chunk does not verify", down)));
        assertFalse(JobOnNode.storeUnreachable(new PermanentStoreException("access denied", null)));
        assertFalse(JobOnNode.storeUnreachable(new IOException("no tier holds rank 1")));
        assertFalse(JobOnNode.storeUnreachable(new IOException("x", new PermanentStoreException("404 bucket", down))));
    }
}
