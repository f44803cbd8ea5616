package io.ferry.stores;

import java.net.URI;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Opens stores of one URI scheme. Built-in providers are registered by {@link Stores}; others
 * are found with {@link java.util.ServiceLoader} (a {@code META-INF/services} entry), so a site
 * can leave the Hadoop or AWS jars out and lose only those schemes.
 */
public interface StoreProvider {
    /** The URI scheme, e.g. {@code hdfs}. */
    String scheme();

    /** The option keys this provider accepts; any other key is refused at open. */
    Set<String> optionKeys();

    /** Whether {@code key} is an option of this provider; by default, one of {@link #optionKeys()}. */
    default boolean accepts(String key) {
        return optionKeys().contains(key);
    }

    /** The accepted options, for an error message. */
    default String describeOptions() {
        return new TreeSet<>(optionKeys()).toString();
    }

    /**
     * Whether calls leave the node over a network service that can fail on its own (HDFS, S3).
     * {@link Stores#open} wraps such stores in a {@link ResilientStore}.
     */
    default boolean remote() {
        return false;
    }

    Store open(URI uri, Map<String, String> options) throws StoreException;
}
