package io.ferry.staging;

import io.ferry.staging.crypt.Keys;
import io.ferry.stores.Store;

import java.nio.file.Path;
import java.time.Clock;
import java.util.Optional;

/** Entry point of the staging module. */
public final class Staging {
    private Staging() {}

    /** A pipeline over {@code store} with Ferry's layout; the caller closes both. */
    public static StagingPipeline pipeline(Store store, StagingConfig config, Clock clock) {
        return new StagingPipeline(new Repository(store, clock), config);
    }

    /**
     * A pipeline whose pushes encrypt every blob with {@code keys} (and name it by a keyed hash)
     * when present; pulls and scrubs then open what those keys sealed.
     */
    public static StagingPipeline pipeline(Store store, StagingConfig config, Clock clock,
                                           Optional<Keys> keys) {
        if (keys.isPresent() && !config.packs()) {
            throw new IllegalArgumentException("encryption at rest needs staging.layout=packs; the chunk layout"
                    + " names each chunk object by the SHA-256 of its bytes and stores it in the clear");
        }
        if (keys.isPresent() && config.fileSha256()) {
            throw new IllegalArgumentException("staging.file-sha256=true would write each file's"
                    + " plaintext SHA-256 into its manifest, in the clear, where it confirms a guessed"
                    + " file: leave it off with encryption (the keyed blob names prove every file)");
        }
        return new StagingPipeline(new Repository(store, clock, Blobs.of(keys)), config);
    }

    /** The node-local cache rooted at {@code root}. */
    public static LocalCache localCache(Path root) {
        return new LocalCache(root);
    }
}
