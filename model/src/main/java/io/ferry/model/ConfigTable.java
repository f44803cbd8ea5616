package io.ferry.model;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * A module's declared configuration keys. {@link #resolve} takes user settings, refuses
 * unknown keys and bad values naming the key, and fills in defaults, once at start-up.
 */
public final class ConfigTable {
    private final Map<String, ConfigKey<?>> keys = new LinkedHashMap<>();

    public ConfigTable(List<ConfigKey<?>> keys) {
        for (ConfigKey<?> k : keys) {
            if (this.keys.put(k.name(), k) != null) {
                throw new IllegalStateException("configuration key declared twice: " + k.name());
            }
        }
    }

    public List<ConfigKey<?>> keys() {
        return List.copyOf(keys.values());
    }

    public boolean knows(String name) {
        return keys.containsKey(name);
    }

    /** Settings resolved against this table: the user's value or the default, parsed. */
    public Resolved resolve(Map<String, String> settings) {
        for (String k : settings.keySet()) {
            if (!keys.containsKey(k)) {
                throw new IllegalArgumentException("unknown configuration key '" + k + "'; known keys: "
                        + new TreeSet<>(keys.keySet()));
            }
        }
        return new Resolved(Map.copyOf(settings));
    }

    /** Parsed values; reading a key not declared in the table is a programming error. */
    public final class Resolved {
        private final Map<String, String> settings;

        private Resolved(Map<String, String> settings) {
            this.settings = settings;
        }

        public <T> T get(ConfigKey<T> key) {
            if (keys.get(key.name()) != key) {
                throw new IllegalStateException("key " + key.name() + " is not declared in this table");
            }
            return key.parse(settings.getOrDefault(key.name(), key.defaultValue()));
        }
    }
}
