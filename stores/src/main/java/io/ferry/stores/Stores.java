package io.ferry.stores;

import io.ferry.stores.posix.PosixStore;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeSet;

/**
 * Opens stores by URI. Built in: {@code file:} ({@link PosixStore}); others ({@code hdfs:},
 * {@code s3:}) come from providers on the class path, found with {@link ServiceLoader}, or
 * registered explicitly. Registering a scheme twice is an error. Remote stores are wrapped in
 * a {@link ResilientStore}; {@code file:} stores are not (a POSIX call that fails is reported
 * at once, and the node agent stages again later). Thread-safe.
 */
public final class Stores {
    private static final Map<String, StoreProvider> PROVIDERS = new HashMap<>();

    static {
        register(PosixStore.provider());
        for (StoreProvider p : ServiceLoader.load(StoreProvider.class, Stores.class.getClassLoader())) {
            register(p);
        }
    }

    private Stores() {}

    public static synchronized void register(StoreProvider provider) {
        if (PROVIDERS.putIfAbsent(provider.scheme(), provider) != null) {
            throw new IllegalStateException("store scheme '" + provider.scheme() + "' is already registered");
        }
    }

    /** Whether the provider of {@code scheme} (if one is registered) takes option {@code key}. */
    public static synchronized boolean accepts(String scheme, String key) {
        StoreProvider p = PROVIDERS.get(scheme);
        return p != null && p.accepts(key);
    }

    /** The schemes of every registered provider that takes option {@code key}. */
    public static synchronized List<String> schemesAccepting(String key) {
        return PROVIDERS.values().stream().filter(p -> p.accepts(key)).map(StoreProvider::scheme).sorted().toList();
    }

    /** {@link #open(URI, Map, Resilience)} with {@link Resilience#DEFAULTS}. */
    public static Store open(URI uri, Map<String, String> options) throws StoreException {
        return open(uri, options, Resilience.DEFAULTS);
    }

    /**
     * Opens the store at {@code uri}. Options not accepted by that scheme's provider are an
     * {@link IllegalArgumentException} naming the key, before any I/O. A remote store comes
     * wrapped in a {@link ResilientStore} with {@code resilience}.
     */
    public static Store open(URI uri, Map<String, String> options, Resilience resilience) throws StoreException {
        StoreProvider p;
        synchronized (Stores.class) {
            p = PROVIDERS.get(uri.getScheme());
        }
        if (p == null) {
            throw new IllegalArgumentException("unsupported store URI '" + uri + "': known schemes are "
                    + new TreeSet<>(PROVIDERS.keySet()));
        }
        for (String k : options.keySet()) {
            if (!p.accepts(k)) {
                throw new IllegalArgumentException("unknown option '" + k + "' for " + uri.getScheme()
                        + " stores; known: " + p.describeOptions());
            }
        }
        Store store = p.open(uri, options);
        return p.remote() ? new ResilientStore(store, resilience) : store;
    }

    /**
     * Whether {@code text} (not blank) is a plain path, which {@link #parse} makes a {@code file:}
     * store, rather than a URI.
     */
    public static boolean isPlainPath(String text) {
        return text.startsWith("/") || !text.matches("[A-Za-z][A-Za-z0-9+.-]*:.*");
    }

    /**
     * Parses what a user typed: a URI with a scheme, or a plain path, which means a
     * {@code file:} store at that (absolute-made) path.
     */
    public static URI parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("empty store URI");
        }
        if (!isPlainPath(text)) {
            try {
                URI uri = new URI(text);
                if ("file".equals(uri.getScheme()) && uri.getPath() == null) {
                    throw new IllegalArgumentException("file store URI needs an absolute path, got '" + text + "'");
                }
                return uri;
            } catch (URISyntaxException e) {
                throw new IllegalArgumentException("invalid store URI '" + text + "': " + e.getReason(), e);
            }
        }
        return Path.of(text).toAbsolutePath().normalize().toUri();
    }
}
