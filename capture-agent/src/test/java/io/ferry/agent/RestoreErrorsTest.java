package io.ferry.agent;

import io.ferry.agent.capture.RestartRefusedException;
import io.ferry.model.MalformedManifestException;
import io.ferry.staging.ImageCorruptException;
import io.ferry.stores.PermanentStoreException;
import io.ferry.stores.TransientStoreException;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.AccessDeniedException;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which restore failures mean "the store is away" (tried again) and which mean "the data is bad" (set aside). */
class RestoreErrorsTest {
    @Test
    void onlyATransientStoreErrorWithNothingAgainstTheDataIsTheStoreBeingAway() {
        TransientStoreException down =
                new TransientStoreException("store s3://b is considered down (circuit open)", null);
        assertTrue(RestoreErrors.storeUnreachable(down));
        assertTrue(RestoreErrors.storeUnreachable(new IOException("restart copy failed", down)), "wrapped by a worker");
        assertFalse(RestoreErrors.storeUnreachable(new ImageCorruptException("chunk does not verify", down)));
        assertFalse(RestoreErrors.storeUnreachable(new PermanentStoreException("access denied", null)));
        assertFalse(RestoreErrors.storeUnreachable(new IOException("no tier holds rank 1")));
        assertFalse(RestoreErrors.storeUnreachable(new IOException("x",
                new PermanentStoreException("404 bucket", down))));
    }

    @Test
    void onlyProofAgainstTheDataSetsAGenerationAside() {
        TransientStoreException down =
                new TransientStoreException("store s3://b is considered down (circuit open)", null);
        assertTrue(RestoreErrors.provenBad(new ImageCorruptException("chunk 3 of state.bin does not verify", null)));
        assertTrue(RestoreErrors.provenBad(new IOException("restart copy failed",
                new MalformedManifestException("truncated manifest", null))), "wrapped by a worker");
        assertTrue(RestoreErrors.provenBad(new RestartRefusedException("dmtcp_restart refused",
                null)));
        assertTrue(RestoreErrors.provenBad(new RestoreErrors.NotCommitted("generation 4 of j has no commit marker")));
        // what says nothing against the data
        assertFalse(RestoreErrors.provenBad(down));
        assertFalse(RestoreErrors.provenBad(new IOException("Cannot run program \"./sim\": error=2,"
                + " No such file or directory")));
        assertFalse(RestoreErrors.provenBad(new AccessDeniedException("/cache/j/4/0/state.bin")));
        assertFalse(RestoreErrors.provenBad(new PermanentStoreException("403 access denied to bucket b", null)),
                "a store this node cannot open");
        assertFalse(RestoreErrors.provenBad(
                new IOException("criu restore: pids [77] of its processes are still taken")));
    }
}
