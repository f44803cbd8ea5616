package io.ferry.stores.hdfs;

import java.util.AbstractSet;
import java.util.Iterator;
import java.util.Set;

/** Option keys: a fixed set, plus any key under a prefix (Hadoop's own keys, passed through). */
final class PrefixedKeys extends AbstractSet<String> {
    private final Set<String> fixed;
    private final String prefix;

    PrefixedKeys(Set<String> fixed, String prefix) {
        this.fixed = fixed;
        this.prefix = prefix;
    }

    @Override
    public boolean contains(Object o) {
        return o instanceof String s && (fixed.contains(s) || (s.startsWith(prefix) && s.length() > prefix.length()));
    }

    @Override
    public Iterator<String> iterator() {
        return new java.util.TreeSet<>(Set.of(fixed.toArray(new String[0]))).iterator(); // plus prefix + "*"
    }

    @Override
    public int size() {
        return fixed.size();
    }

    @Override
    public String toString() {
        return fixed + " and " + prefix + "<hadoop key>";
    }
}
