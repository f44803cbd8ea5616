package io.ferry.staging;

import io.ferry.stores.Store;
import io.ferry.stores.Stores;
import org.junit.jupiter.api.Assertions;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;

/**
 * A real file: store and a pipeline with small chunks (the chunk layout, unless told), so boundaries are cheap to test.
 */
final class Fixture implements AutoCloseable {
    static final int CHUNK = 64 * 1024;
    final Path root;
    final Store store;
    final StagingPipeline pipeline;

    Fixture(Path root) throws IOException {
        this(root, Map.of("staging.layout", "chunks", "staging.chunk-size", Integer.toString(CHUNK),
                "staging.workers", "3"));
    }

    Fixture(Path root, Map<String, String> settings) throws IOException {
        this.root = root;
        this.store = Stores.open(root.resolve("store").toUri(), Map.of());
        this.pipeline = Staging.pipeline(store, StagingConfig.from(settings), Clock.systemUTC());
    }

    Path storeDir() {
        return root.resolve("store");
    }

    static byte[] randomBytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** An image of two seeded random files, {@code a.bin} and {@code b.bin}, in {@code dir}. */
    static Path twoFiles(Path dir, long seedA, int sizeA, long seedB, int sizeB) throws IOException {
        write(dir.resolve("a.bin"), randomBytes(sizeA, seedA));
        write(dir.resolve("b.bin"), randomBytes(sizeB, seedB));
        return dir;
    }

    static void write(Path file, byte[] data) throws IOException {
        Files.createDirectories(file.getParent());
        Files.write(file, data);
    }

    @Override
    public void close() throws IOException {
        pipeline.close();
        store.close();
    }

    static List<Path> files(Path root) throws IOException {
        try (Stream<Path> s = Files.walk(root)) {
            return s.map(root::relativize).sorted().toList();
        }
    }

    /** The same paths, link targets, permission bits and file contents under both roots. */
    static void assertSameTree(Path a, Path b) throws IOException {
        Assertions.assertEquals(files(a), files(b));
        for (Path rel : files(a)) {
            Path x = a.resolve(rel);
            Path y = b.resolve(rel);
            if (Files.isSymbolicLink(x)) {
                Assertions.assertEquals(Files.readSymbolicLink(x), Files.readSymbolicLink(y),
                        rel.toString());
            } else {
                Assertions.assertEquals(Files.getPosixFilePermissions(x,
                        LinkOption.NOFOLLOW_LINKS),
                        Files.getPosixFilePermissions(y, LinkOption.NOFOLLOW_LINKS), rel.toString());
                if (Files.isRegularFile(x, LinkOption.NOFOLLOW_LINKS)) {
                    Assertions.assertEquals(-1, Files.mismatch(x, y), rel.toString());
                }
            }
        }
    }
}
