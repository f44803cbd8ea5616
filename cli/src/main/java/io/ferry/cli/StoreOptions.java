package io.ferry.cli;

import io.ferry.staging.OpenedStore;
import io.ferry.stores.Stores;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;

/** The options every store command shares: {@code --store} and {@code --set key=value}. */
final class StoreOptions {
    @Option(names = "--store", required = true, paramLabel = "URI",
            description = "Store URI: file:/path or a plain path (POSIX, Lustre),"
                    + " hdfs://namenode:port/path, s3://bucket/prefix.")
    String store;

    @Option(names = "--set", paramLabel = "KEY=VALUE",
            description = "Configuration, repeatable: staging.*, cache.* and store.* keys"
                    + " (see docs/reference/configuration.md), or store options such as posix.lustre.stripe-count,"
                    + " s3.endpoint, hdfs.replication.")
    Map<String, String> settings = new LinkedHashMap<>();

    OpenedStore open() throws IOException {
        return open(store, settings);
    }

    /**
     * Opens {@code storeText} with {@code settings} over the configuration file's and environment's
     * ({@link Configuration}).
     */
    static OpenedStore open(String storeText, Map<String, String> settings) throws IOException {
        String text = storeText != null && !storeText.isBlank() && Stores.isPlainPath(storeText)
                ? Invocation.current().resolve(storeText).toString() : storeText;
        return OpenedStore.open(text, Configuration.merged(settings, text));
    }
}
