package io.ferry.stores.hdfs;

import io.ferry.stores.Store;
import io.ferry.stores.StoreException;
import io.ferry.stores.StoreProvider;

import java.net.URI;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/** {@code hdfs://namenode[:port]/path} stores; found through {@code META-INF/services}. */
public final class HdfsStoreProvider implements StoreProvider {
    @Override
    public String scheme() {
        return "hdfs";
    }

    @Override
    public Set<String> optionKeys() {
        return HdfsStore.OPTIONS;
    }

    /** The fixed keys, and any Hadoop client key under {@code hdfs.conf.}. */
    @Override
    public boolean accepts(String key) {
        return HdfsStore.OPTIONS.contains(key)
                || (key.startsWith(HdfsStore.CONF_PREFIX) && key.length() > HdfsStore.CONF_PREFIX.length());
    }

    @Override
    public String describeOptions() {
        return new TreeSet<>(HdfsStore.OPTIONS) + " and " + HdfsStore.CONF_PREFIX + "<hadoop key>";
    }

    @Override
    public boolean remote() {
        return true;
    }

    @Override
    public Store open(URI uri, Map<String, String> options) throws StoreException {
        return HdfsStore.open(uri, options, System.getenv("HADOOP_CONF_DIR"));
    }
}
