package io.ferry.coordinator;

import java.util.ArrayList;
import java.util.HashMap;

/**
 * A job's node names, each held once and numbered in order of first appearance, so that
 * per-rank and per-node state can hold an int instead of a string. Not thread-safe.
 */
final class NodeNames {
    private final ArrayList<String> names = new ArrayList<>();
    private final HashMap<String, Integer> index = new HashMap<>();

    int index(String name) {
        Integer i = index.get(name);
        if (i == null) {
            i = names.size();
            names.add(name);
            index.put(name, i);
        }
        return i;
    }

    int find(String name) {
        Integer i = index.get(name);
        return i == null ? -1 : i;
    }

    String name(int i) {
        return names.get(i);
    }

    int size() {
        return names.size();
    }
}
