package io.ferry.stores.s3;

import io.ferry.stores.Store;
import io.ferry.stores.StoreException;
import io.ferry.stores.StoreProvider;

import java.net.URI;
import java.util.Map;
import java.util.Set;

/** {@code s3://bucket/prefix} stores; found through {@code META-INF/services}. */
public final class S3StoreProvider implements StoreProvider {
    @Override
    public String scheme() {
        return "s3";
    }

    @Override
    public Set<String> optionKeys() {
        return S3Settings.KEYS;
    }

    @Override
    public boolean remote() {
        return true;
    }

    @Override
    public Store open(URI uri, Map<String, String> options) throws StoreException {
        return S3Store.open(uri, S3Settings.from(options, System.getenv()));
    }
}
