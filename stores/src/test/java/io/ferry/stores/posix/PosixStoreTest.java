package io.ferry.stores.posix;

import com.sun.nio.file.ExtendedOpenOption;
import io.ferry.stores.PermanentStoreException;
import io.ferry.stores.Store;
import io.ferry.stores.StoreContractTest;
import io.ferry.stores.StoreException;
import io.ferry.stores.Stores;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
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
        assertEquals("rw-------", PosixFilePermissions.toString(
                Files.getPosixFilePermissions(dir.resolve("jobs/a/b/k"))));
        for (String d : new String[]{"jobs", "jobs/a", "jobs/a/b"}) {
            assertEquals("rwx------", PosixFilePermissions.toString(
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
        Files.setLastModifiedTime(stale,
                FileTime.from(Instant.now().minusSeconds(7 * 3600)));
        Duration grace = Duration.ofHours(6);
        assertEquals(1, store.deleteAbandoned(grace, true));
        assertTrue(Files.exists(stale), "a dry run deletes nothing");
        assertEquals(1, store.deleteAbandoned(grace, false));
        assertTrue(!Files.exists(stale) && Files.exists(fresh));
        assertEquals(List.of("a/k"), store.list(""));
        assertEquals(0, store.deleteAbandoned(grace, false));
    }

    /**
     * A sweep beside puts and deletes: a put renames its temporary file away, and a generation's directory goes,
     * between the sweep's listing and its look-up. What is gone by then is skipped; the sweep never fails for it
     * (it did, in a gc run beside a push), and it still removes the abandoned file it was run for.
     */
    @Test
    void aSweepBesidePutsAndDeletesSkipsWhatVanishedAndStillSweeps() throws Exception {
        Path stale = Files.createDirectories(dir.resolve("old")).resolve(".j.tmp-1");
        Files.write(stale, new byte[10]);
        Files.setLastModifiedTime(stale, FileTime.from(Instant.now().minusSeconds(3600)));
        AtomicBoolean stop = new AtomicBoolean();
        Thread churn = new Thread(() -> {
            for (int i = 0; !stop.get(); i++) {
                Path d = dir.resolve("jobs/j/" + (i % 8));
                try {
                    Files.createDirectories(d);
                    for (int k = 0; k < 16; k++) { // what a put does: a temporary file, renamed into place
                        Path tmp = d.resolve(".m" + k + ".tmp-" + i);
                        Files.write(tmp, new byte[1]);
                        Files.move(tmp, d.resolve("m" + k), StandardCopyOption.ATOMIC_MOVE);
                    }
                    try (Stream<Path> files = Files.list(d)) { // and a gc removing a generation
                        for (Path f : (Iterable<Path>) files::iterator) {
                            Files.deleteIfExists(f);
                        }
                    }
                    Files.deleteIfExists(d);
                } catch (IOException raced) {
                    // the sweep deleted a temporary file first, or a listing saw a file going: churn on
                }
            }
        });
        churn.start();
        try {
            int swept = 0;
            long until = System.nanoTime() + Duration.ofSeconds(2).toNanos();
            for (int round = 0; round < 50 || System.nanoTime() < until; round++) {
                swept += store.deleteAbandoned(Duration.ofMinutes(10), false);
            }
            assertEquals(1, swept, "the abandoned file, once; the puts' own files are younger than the grace");
            assertTrue(!Files.exists(stale));
        } finally {
            stop.set(true);
            churn.join();
        }
    }

    @Test
    void writeUnderAFileIsAClearError() throws Exception {
        store.put("a", ByteBuffer.wrap(new byte[1]));
        StoreException e = assertThrows(StoreException.class, () -> store.put("a/b", ByteBuffer.wrap(new byte[1])));
        assertTrue(e.getMessage().contains("cannot write a/b"), e.getMessage());
    }

    /** Whether this directory's file system takes O_DIRECT, asked the way the JDK asks. */
    private static boolean takesDirectIo(Path dir) {
        Path probe = dir.resolve("direct-probe");
        try (var ch = FileChannel.open(probe, StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE, ExtendedOpenOption.DIRECT)) {
            return true;
        } catch (Exception refused) {
            return false;
        } finally {
            try {
                Files.deleteIfExists(probe);
            } catch (IOException ignored) {
                // the probe is in a temporary directory
            }
        }
    }

    @Test
    void largeObjectsAreWrittenWithODirectWholeAtEveryLengthAndOwnerOnly() throws Exception {
        Random r = new Random(7);
        int mib = 1 << 20;
        // exactly one slice; one byte over; several slices ending mid-block; several ending on a block
        int[] lengths = {mib, mib + 1, 3 * mib + 4095, 2 * mib + 4096, mib - 1};
        for (int len : lengths) {
            byte[] data = new byte[len];
            r.nextBytes(data);
            ByteBuffer b = ByteBuffer.wrap(data);
            store.put("packs/p" + len, b);
            assertEquals(0, b.position(), "the caller's buffer is left as it was");
            Path f = dir.resolve("packs/p" + len);
            assertEquals(len, Files.size(f), "no padding left at the end");
            assertTrue(Arrays.equals(data, Files.readAllBytes(f)), "bytes of a " + len + "-byte object");
            assertEquals("rw-------",
                    PosixFilePermissions.toString(Files.getPosixFilePermissions(f)));
            // reads go in 1 MiB slices: a range and a whole read across several of them come back whole
            byte[] range = new byte[len - 3];
            store.readRange("packs/p" + len, 3, range, 0, len - 3);
            assertTrue(Arrays.equals(data, 3, len, range, 0, len - 3), "range of a " + len + "-byte object");
            byte[] whole = new byte[len];
            assertEquals(len, store.read("packs/p" + len, whole));
            assertTrue(Arrays.equals(data, whole), "read of a " + len + "-byte object");
        }
        assertEquals(takesDirectIo(dir), ((PosixStore) store).directIo(),
                "O_DIRECT stays on exactly where the file system takes it");
        assertEquals(takesDirectIo(dir) ? lengths.length - 1 : 0, ((PosixStore) store).directWrites(),
                "every object of 1 MiB and more went through O_DIRECT, the smaller one not");
        try (Stream<Path> s = Files.walk(dir)) {
            assertEquals(lengths.length, s.filter(Files::isRegularFile).count(), "no temporary file left");
        }
    }

    /**
     * Packs filled in aligned direct memory ({@code Store#putsDirectMemory}) go to the disk from that
     * memory, their last partial block through the store's own buffer; direct memory off a block boundary
     * is copied as a heap buffer is. Either way the object is whole at every length.
     */
    @Test
    void directMemoryOnABlockBoundaryOrOffItIsWrittenWholeAtEveryLength() throws Exception {
        assertEquals(takesDirectIo(dir), store.putsDirectMemory());
        Random r = new Random(8);
        int mib = 1 << 20;
        int n = 0;
        for (int len : new int[]{mib, mib + 1, 3 * mib + 4095, 2 * mib + 4096, mib - 1}) {
            for (int misalign : new int[]{0, 1}) {
                byte[] data = new byte[len];
                r.nextBytes(data);
                ByteBuffer b = ByteBuffer.allocateDirect(len + 2 * Store.DIRECT_ALIGNMENT)
                        .alignedSlice(Store.DIRECT_ALIGNMENT);
                b.position(misalign);
                b = b.slice().put(data).flip();
                assertEquals(misalign == 0, b.alignmentOffset(0, Store.DIRECT_ALIGNMENT) == 0);
                String key = "packs/d" + len + "-" + misalign;
                store.put(key, b);
                n++;
                assertEquals(0, b.position(), "the caller's buffer is left as it was");
                Path f = dir.resolve(key);
                assertEquals(len, Files.size(f), "no padding left at the end");
                assertTrue(Arrays.equals(data, Files.readAllBytes(f)),
                        "bytes of a " + len + "-byte object, misaligned by " + misalign);
            }
        }
        try (Stream<Path> s = Files.walk(dir)) {
            assertEquals(n, s.filter(Files::isRegularFile).count(), "no temporary file left");
        }
    }

    /**
     * ramfs, a real file system, refuses O_DIRECT (EINVAL) after Linux has created the file: the put
     * still lands whole, leaves no temporary file, and the store writes through the page cache from then on.
     */
    @Test
    void aFileSystemThatRefusesODirectGetsTheObjectThroughThePageCache() throws Exception {
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")),
                "mounting ramfs needs root");
        Path mnt = Files.createDirectories(dir.resolve("ramfs"));
        Process mount = new ProcessBuilder("mount", "-t", "ramfs", "ramfs", mnt.toString()).inheritIO().start();
        Assumptions.assumeTrue(mount.waitFor() == 0, "cannot mount ramfs here");
        try (Store onRamfs = Stores.open(mnt.toUri(), Map.of())) {
            assertTrue(!takesDirectIo(mnt), "ramfs took O_DIRECT: this test no longer tests a refusal");
            byte[] data = new byte[2 * (1 << 20) + 17];
            new Random(5).nextBytes(data);
            onRamfs.put("packs/a", ByteBuffer.wrap(data));
            onRamfs.put("packs/b", ByteBuffer.wrap(data));
            assertTrue(Arrays.equals(data, onRamfs.get("packs/a")));
            assertTrue(Arrays.equals(data, onRamfs.get("packs/b")));
            assertTrue(!((PosixStore) onRamfs).directIo(), "O_DIRECT is off once refused");
            assertEquals(0, ((PosixStore) onRamfs).directWrites());
            try (Stream<Path> s = Files.walk(mnt)) {
                assertEquals(List.of(mnt.resolve("packs/a"), mnt.resolve("packs/b")),
                        s.filter(Files::isRegularFile).sorted().toList(), "the refused open's file is gone");
            }
        } finally {
            new ProcessBuilder("umount", mnt.toString()).inheritIO().start().waitFor();
        }
    }

    /** The page-cache pages {@code file} holds, as util-linux's {@code fincore} counts them. */
    private static long residentPages(Path file) throws Exception {
        Process p = new ProcessBuilder("fincore", "--noheadings", "--output", "PAGES", file.toString()).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertEquals(0, p.waitFor(), "fincore " + file + ": " + out);
        return Long.parseLong(out);
    }

    /**
     * What O_DIRECT is for: a pack written by the store does not sit in the node's page cache; one
     * written through it does.
     */
    @Test
    void aPackWrittenWithODirectLeavesNothingInThePageCache() throws Exception {
        Assumptions.assumeTrue(takesDirectIo(dir), "this file system refuses O_DIRECT");
        Assumptions.assumeTrue(new ProcessBuilder("fincore", "--version").start().waitFor() == 0,
                "no fincore (util-linux)");
        byte[] data = new byte[4 * (1 << 20) + 100];
        new Random(11).nextBytes(data);
        store.put("packs/direct", ByteBuffer.wrap(data));
        try (Store buffered = Stores.open(dir.resolve("buffered").toUri(), Map.of(PosixStore.DIRECT_IO, "off"))) {
            buffered.put("packs/cached", ByteBuffer.wrap(data));
        }
        long pages = (data.length + 4095) / 4096;
        assertTrue(residentPages(dir.resolve("packs/direct")) <= 1, "O_DIRECT left the pack's pages out of the cache");
        assertTrue(residentPages(dir.resolve("buffered/packs/cached")) > pages / 2, "a buffered write leaves them in");
    }

    @Test
    void directIoOffWritesLargeObjectsThroughThePageCacheAndABadValueIsRefused() throws Exception {
        Path other = dir.resolve("buffered");
        try (Store buffered = Stores.open(other.toUri(), Map.of(PosixStore.DIRECT_IO, "off"))) {
            byte[] data = new byte[3 * (1 << 20) + 5];
            new Random(3).nextBytes(data);
            buffered.put("k", ByteBuffer.wrap(data));
            assertTrue(Arrays.equals(data, buffered.get("k")));
            assertTrue(!((PosixStore) buffered).directIo());
            assertEquals(0, ((PosixStore) buffered).directWrites());
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Stores.open(other.toUri(), Map.of(PosixStore.DIRECT_IO, "yes")));
        assertEquals("posix.direct-io must be on or off, got 'yes'", e.getMessage());
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
