package io.ferry.staging;

import io.ferry.model.ImageRef;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * A pack-layout pipeline ({@link #PACKS}) on a real POSIX store in a temporary directory, and an empty image directory.
 */
abstract class PackStoreTestBase {
    static final Map<String, String> PACKS = Map.of("staging.layout", "packs", "staging.blob-size", "16KiB",
            "staging.pack-size", "1MiB", "staging.workers", "3");
    @TempDir
    Path tmp;
    Fixture fx;
    Path image;

    @BeforeEach
    void setUp() throws IOException {
        fx = new Fixture(tmp, PACKS);
        image = tmp.resolve("image");
        Files.createDirectories(image);
    }

    @AfterEach
    void tearDown() throws IOException {
        fx.close();
    }

    /** Generation {@code g} of rank 0 of job "job". */
    static ImageRef gen(long g) {
        return new ImageRef("job", g, 0);
    }
}
