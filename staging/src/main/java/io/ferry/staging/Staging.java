package io.ferry.staging;

import io.ferry.stores.Store;

import java.nio.file.Path;
import java.time.Clock;

/** Entry point of the staging module. */
public final class Staging {
    private Staging() {}

    /** A pipeline over {@code store} with Ferry's layout; the caller closes both. */
    public static StagingPipeline pipeline(Store store, StagingConfig config, Clock clock) {
        return new StagingPipeline(new Repository(store, clock), config);
    }

    /** The node-local cache rooted at {@code root}. */
    public static LocalCache localCache(Path root) {
        return new LocalCache(root);
    }
}
