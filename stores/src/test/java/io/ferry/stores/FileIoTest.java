package io.ferry.stores;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.EOFException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Reads and writes through each thread's small direct buffer, on real files, across and within its slices. */
class FileIoTest {
    @TempDir
    Path dir;

    /** Lengths around the slice: under one, exactly one, one and a bit, several. */
    private static final int[] LENGTHS = {0, 1, 4095, FileIo.SLICE, FileIo.SLICE + 1, 3 * FileIo.SLICE + 12345};

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new SplittableRandom(seed).nextBytes(b);
        return b;
    }

    @Test
    void writeThenReadGivesTheBytesBackAtAnOffsetOfTheArray() throws Exception {
        for (int len : LENGTHS) {
            byte[] data = random(len + 7, len);
            Path f = dir.resolve("w" + len);
            try (FileChannel ch = FileChannel.open(f, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                FileIo.write(ch, data, 7, len);
                assertEquals(len, ch.position(), "the channel's position moved past what was written");
            }
            assertArrayEquals(Arrays.copyOfRange(data, 7, len + 7), Files.readAllBytes(f));
            byte[] back = new byte[len + 3];
            try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
                assertEquals(len, FileIo.read(ch, back, 3, len));
            }
            assertArrayEquals(Arrays.copyOfRange(data, 7, len + 7), Arrays.copyOfRange(back, 3, len + 3));
        }
    }

    @Test
    void aReadPastTheEndReturnsWhatTheFileHeld() throws Exception {
        byte[] data = random(FileIo.SLICE + 100, 1);
        Path f = Files.write(dir.resolve("short"), data);
        byte[] back = new byte[2 * FileIo.SLICE];
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
            assertEquals(data.length, FileIo.read(ch, back, 0, back.length));
            assertEquals(0, FileIo.read(ch, back, 0, back.length), "at the end: nothing more");
        }
        assertArrayEquals(data, Arrays.copyOf(back, data.length));
    }

    @Test
    void positionalCallsLeaveThePositionAndRefuseAReadPastTheEnd() throws Exception {
        byte[] data = random(3 * FileIo.SLICE, 2);
        Path f = dir.resolve("pos");
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                StandardOpenOption.READ)) {
            FileIo.writeFully(ch, 1000, data, 0, data.length);
            assertEquals(0, ch.position());
            assertEquals(1000 + data.length, ch.size());
            byte[] back = new byte[FileIo.SLICE + 5];
            FileIo.readFully(ch, 1000 + FileIo.SLICE - 2, back, 5, FileIo.SLICE);
            assertArrayEquals(Arrays.copyOfRange(data, FileIo.SLICE - 2, 2 * FileIo.SLICE - 2),
                    Arrays.copyOfRange(back, 5, back.length));
            EOFException e = assertThrows(EOFException.class, () -> FileIo.readFully(ch, ch.size() - 10, back, 0, 11));
            assertEquals("the file ends at " + ch.size() + " bytes, before " + (ch.size() + 1), e.getMessage());
            assertEquals(0, ch.position());
        }
    }

    @Test
    void threadsWritingDisjointRangesOfOneFileDoNotMixTheirBytes() throws Exception {
        int parts = 8;
        int part = FileIo.SLICE + 4099; // each crosses a slice of its writer's buffer
        byte[][] data = new byte[parts][];
        Path f = dir.resolve("parallel");
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                StandardOpenOption.READ)) {
            Future<?>[] done = new Future<?>[parts];
            for (int i = 0; i < parts; i++) {
                data[i] = random(part, 100 + i);
                int k = i;
                done[i] = pool.submit(() -> {
                    FileIo.writeFully(ch, (long) k * part, data[k], 0, part);
                    return null;
                });
            }
            for (Future<?> d : done) {
                d.get();
            }
            for (int i = 0; i < parts; i++) {
                byte[] back = new byte[part];
                FileIo.readFully(ch, (long) i * part, back, 0, part);
                assertArrayEquals(data[i], back, "part " + i);
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
