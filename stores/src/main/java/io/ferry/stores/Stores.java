package io.ferry.stores;

import io.ferry.stores.posix.PosixStore;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Opens stores by URI. Schemes are registered explicitly; registering one twice is an error.
 * Built in: {@code file:} ({@link PosixStore}). Thread-safe.
 */
public final class Stores {
    private static final Map<String, StoreProvider> PROVIDERS = new HashMap<>();

    static {
        register("file", PosixStore.provider());
    }

    private Stores() {}

    public static synchronized void register(String scheme, StoreProvider provider) {
        if (PROVIDERS.putIfAbsent(scheme, provider) != null) {
            throw new IllegalStateException("store scheme '" + scheme + "' is already registered");
        }
    }

    /**
     * Opens the store at {@code uri}. Options not accepted by that scheme's provider are an
     * {@link IllegalArgumentException} naming the key, before any I/O.
     */
    public static Store open(URI uri, Map<String, String> options) throws StoreException {
        StoreProvider p;
        synchronized (Stores.class) {
            p = PROVIDERS.get(uri.getScheme());
        }
        if (p == null) {
            throw new IllegalArgumentException("unsupported store URI '" + uri + "': known schemes are "
                    + new TreeSet<>(PROVIDERS.keySet()));
        }
        Set<String> known = p.optionKeys();
        for (String k : options.keySet()) {
            if (!known.contains(k)) {
                throw new IllegalArgumentException("unknown option '" + k + "' for " + uri.getScheme()
                        + " stores; known: " + new TreeSet<>(known));
            }
        }
        return p.open(uri, options);
    }

    /**
     * Parses what a user typed: a URI with a scheme, or a plain path, which means a
     * {@code file:} store at that (absolute-made) path.
     */
    public static URI parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("empty store URI");
        }
        if (text.matches("[A-Za-z][A-Za-z0-9+.-]*:.*") && !text.startsWith("/")) {
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
