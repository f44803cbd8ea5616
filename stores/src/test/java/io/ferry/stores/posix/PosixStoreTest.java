package io.ferry.stores.posix;

import io.ferry.stores.PermanentStoreException;
import io.ferry.stores.Store;
import io.ferry.stores.StoreContractTest;
import io.ferry.stores.StoreException;
import io.ferry.stores.Stores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PosixStoreTest extends StoreContractTest {
    @TempDir
    Path dir;

    @Override
    protected Store openStore() throws Exception {
        return Stores.open(dir.toUri(), Map.of());
    }

    @Test
    void objectsAreOwnerOnlyAndSoAreTheDirectoriesTheStoreCreates() throws Exception {
        store.put("jobs/a/b/k", ByteBuffer.wrap(new byte[]{1, 2, 3}));
        assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(
                Files.getPosixFilePermissions(dir.resolve("jobs/a/b/k"))));
        for (String d : new String[]{"jobs", "jobs/a", "jobs/a/b"}) {
            assertEquals("rwx------", java.nio.file.attribute.PosixFilePermissions.toString(
                    Files.getPosixFilePermissions(dir.resolve(d))), d);
        }
    }

    @Test
    void putLeavesNoTemporaryFiles() throws Exception {
        store.put("a/k", ByteBuffer.wrap(new byte[100]));
        try (Stream<Path> s = Files.walk(dir)) {
            assertEquals(List.of(dir.resolve("a/k")), s.filter(Files::isRegularFile).toList());
        }
    }

    @Test
    void leftoverTemporaryFilesOfACrashAreInvisible() throws Exception {
        store.put("a/k", ByteBuffer.wrap(new byte[1]));
        Files.write(dir.resolve("a/.j.tmp-1234"), new byte[10]);
        assertEquals(List.of("a/k"), store.list(""));
    }

    @Test
    void temporaryFilesOfInterruptedPutsAreSweptOnceOlderThanTheGraceNotBefore() throws Exception {
        store.put("a/k", ByteBuffer.wrap(new byte[1]));
        Path stale = dir.resolve("a/.j.tmp-1234");
        Path fresh = dir.resolve("a/.i.tmp-5678"); // a put in progress
        Files.write(stale, new byte[10]);
        Files.write(fresh, new byte[10]);
        Files.setLastModifiedTime(stale, java.nio.file.attribute.FileTime.from(java.time.Instant.now().minusSeconds(7 * 3600)));
        java.time.Duration grace = java.time.Duration.ofHours(6);
        assertEquals(1, store.deleteAbandoned(grace, true));
        assertTrue(Files.exists(stale), "a dry run deletes nothing");
        assertEquals(1, store.deleteAbandoned(grace, false));
        assertTrue(!Files.exists(stale) && Files.exists(fresh));
        assertEquals(List.of("a/k"), store.list(""));
        assertEquals(0, store.deleteAbandoned(grace, false));
    }

    @Test
    void writeUnderAFileIsAClearError() throws Exception {
        store.put("a", ByteBuffer.wrap(new byte[1]));
        StoreException e = assertThrows(StoreException.class, () -> store.put("a/b", ByteBuffer.wrap(new byte[1])));
        assertTrue(e.getMessage().contains("cannot write a/b"), e.getMessage());
    }

    @Test
    void unknownOptionIsRefusedNamingIt() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Stores.open(dir.toUri(), Map.of("posix.stripe", "4")));
        assertTrue(e.getMessage().contains("posix.stripe"), e.getMessage());
    }

    @Test
    void stripingWithoutLfsIsAClearError() {
        PermanentStoreException e = assertThrows(PermanentStoreException.class,
                () -> Stores.open(dir.toUri(), Map.of(PosixStore.STRIPE_COUNT, "4")));
        assertTrue(e.getMessage().contains("'lfs' command is not on PATH"), e.getMessage());
    }

    @Test
    void plainPathsAndFileUrisParse() {
        assertEquals("file", Stores.parse("relative/dir").getScheme());
        assertEquals("/x/y", Stores.parse("file:///x/y").getPath());
        assertThrows(IllegalArgumentException.class, () -> Stores.open(Stores.parse("gopher://x/y"), Map.of()));
    }
}
