package io.ferry.staging;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A host's store credentials go to a store of their kind only. */
class OpenedStoreTest {
    @TempDir
    Path tmp;

    @Test
    void anAgentsS3CredentialsAreNotHandedToAFileStore() throws Exception {
        Map<String, String> secrets = Map.of("s3.access-key-id", "AKIA", "s3.secret-access-key", "shh");
        Map<String, String> job = Map.of("staging.layout", "packs");
        String store = tmp.resolve("store").toString();
        Map<String, String> settings = OpenedStore.withSecrets(store, job, secrets);
        assertEquals(job, settings);
        try (OpenedStore opened = OpenedStore.open(store, settings)) {
            assertTrue(opened.store().uri().toString().startsWith("file:"));
        }
        Map<String, String> everything = new HashMap<>(job);
        everything.putAll(secrets);
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> OpenedStore.open(store, everything).close());
        assertTrue(refused.getMessage().contains("s3."), refused.getMessage());
    }
}
