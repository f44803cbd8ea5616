package io.ferry.cli;

import io.ferry.staging.Staging;
import io.ferry.staging.StagingConfig;
import io.ferry.staging.StagingPipeline;
import io.ferry.staging.StoreSettings;
import io.ferry.stores.Store;
import io.ferry.stores.Stores;
import picocli.CommandLine.Option;

import java.io.Closeable;
import java.io.IOException;
import java.net.URI;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;

/** The options every store command shares: {@code --store} and {@code --set key=value}. */
final class StoreOptions {
    @Option(names = "--store", required = true, paramLabel = "URI",
            description = "Store URI: file:/path or a plain path (POSIX, Lustre), hdfs://namenode:port/path, s3://bucket/prefix.")
    String store;

    @Option(names = "--set", paramLabel = "KEY=VALUE",
            description = "Configuration, repeatable: staging.*, cache.* and store.* keys (see README), or store options such as posix.lustre.stripe-count, s3.endpoint, hdfs.replication.")
    Map<String, String> settings = new LinkedHashMap<>();

    /** An open store and pipeline, closed together. */
    record Opened(Store store, StagingPipeline pipeline) implements Closeable {
        @Override
        public void close() throws IOException {
            pipeline.close();
            store.close();
        }
    }

    Opened open() throws IOException {
        return open(store, settings);
    }

    static Opened open(String storeText, Map<String, String> settings) throws IOException {
        Map<String, String> staging = new LinkedHashMap<>();
        Map<String, String> resilience = new LinkedHashMap<>();
        Map<String, String> storeOpts = new LinkedHashMap<>();
        settings.forEach((k, v) -> (StagingConfig.TABLE.knows(k) ? staging
                : StoreSettings.TABLE.knows(k) ? resilience : storeOpts).put(k, v));
        StagingConfig config = StagingConfig.from(staging);
        URI uri = Stores.parse(storeText);
        Store s = Stores.open(uri, storeOpts, StoreSettings.resilience(resilience));
        return new Opened(s, Staging.pipeline(s, config, Clock.systemUTC()));
    }
}
