package io.ferry.staging;

import io.ferry.staging.crypt.Keys;
import io.ferry.stores.CountingStore;
import io.ferry.stores.Store;
import io.ferry.stores.StoreStats;
import io.ferry.stores.Stores;

import java.io.Closeable;
import java.io.IOException;
import java.net.URI;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A store and the staging pipeline over it, opened from a URI and {@code --set} settings and
 * closed together: what the CLI, every agent and the coordinator open a job's store with, so
 * the settings mean the same everywhere. The store comes wrapped in a {@link CountingStore}:
 * {@link #stats()} says what went through it (a node agent's meters read it).
 */
public record OpenedStore(Store store, StagingPipeline pipeline) implements Closeable {
    /**
     * Opens {@code storeText} (a URI or a plain path): {@code staging.*}/{@code cache.*} keys
     * configure the pipeline, {@code store.*} keys its resilience, any other key goes to the
     * store (e.g. {@code s3.endpoint}). Unknown keys and bad values fail, naming the key.
     */
    public static OpenedStore open(String storeText, Map<String, String> settings) throws IOException {
        return open(storeText, settings, System.getenv());
    }

    /**
     * {@link #open(String, Map)} with the process environment {@code env}, where
     * {@code FERRY_ENCRYPTION_KEY} may hold the key of encryption at rest ({@code encryption.key-file}
     * names a file holding it instead): each process takes the key from its own environment or file,
     * so it never travels in the event log nor on a command line.
     */
    public static OpenedStore open(String storeText, Map<String, String> settings, Map<String, String> env)
            throws IOException {
        Map<String, String> staging = new LinkedHashMap<>();
        Map<String, String> resilience = new LinkedHashMap<>();
        Map<String, String> encryption = new LinkedHashMap<>();
        Map<String, String> storeOpts = new LinkedHashMap<>();
        settings.forEach((k, v) -> (StagingConfig.TABLE.knows(k) ? staging : StoreSettings.TABLE.knows(k) ? resilience
                : Keys.TABLE.knows(k) ? encryption : storeOpts).put(k, v));
        StagingConfig config = StagingConfig.from(staging);
        var keys = Keys.resolveWithPrevious(encryption, env);
        URI uri = Stores.parse(storeText);
        Store s = new CountingStore(Stores.open(uri, storeOpts, StoreSettings.resilience(resilience)));
        try {
            return new OpenedStore(s, Staging.pipeline(s, config, Clock.systemUTC(), keys));
        } catch (RuntimeException e) {
            s.close();
            throw e;
        }
    }

    /**
     * A job's {@code settings} for {@code storeText} with a host's {@code secrets} (its store
     * credentials) added where the store's kind takes them: an agent holds credentials of every kind
     * its jobs use, and a store refuses a key it does not know.
     */
    public static Map<String, String> withSecrets(String storeText, Map<String, String> settings,
                                                  Map<String, String> secrets) {
        Map<String, String> all = new LinkedHashMap<>(settings);
        String scheme = Stores.parse(storeText).getScheme();
        secrets.forEach((k, v) -> {
            if (Stores.accepts(scheme, k)) {
                all.put(k, v);
            }
        });
        return all;
    }

    /** Objects and bytes written and read through this store since it was opened. */
    public StoreStats stats() {
        return store instanceof CountingStore c ? c.stats() : StoreStats.NONE;
    }

    @Override
    public void close() throws IOException {
        pipeline.close();
        store.close();
    }
}
