package io.ferry.coordinator;

import io.ferry.model.Event;
import io.ferry.staging.OpenedStore;
import io.ferry.staging.Repository;

import java.io.Closeable;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

/**
 * The stores of the jobs a coordinator serves, each opened once from the job's start event
 * (URI and settings; credentials from the coordinator's own environment) and kept open.
 * Thread-safe (the coordinator thread and its committers share it).
 */
final class JobStores implements Closeable {
    private final Map<String, OpenedStore> open = new HashMap<>();
    private final Map<String, String> secrets;

    /** @param secrets store credentials known to this process, added to every job's settings (never logged) */
    JobStores(Map<String, String> secrets) {
        this.secrets = Map.copyOf(secrets);
    }

    /** The repository of {@code started}'s store, opened on first use. */
    synchronized Repository of(Event.JobStarted started) throws IOException {
        String key = started.store() + "\n" + started.launch().settings();
        OpenedStore s = open.get(key);
        if (s == null) {
            Map<String, String> settings = new HashMap<>(started.launch().settings());
            settings.putAll(secrets);
            // The coordinator reads manifests and writes markers, never a blob: it needs no key of encryption at
            // rest, and the key file a job names need not exist on the coordinator's host.
            settings.keySet().removeIf(io.ferry.staging.crypt.Keys.TABLE::knows);
            s = OpenedStore.open(started.store(), settings, Map.of());
            open.put(key, s);
        }
        return s.pipeline().repository();
    }

    @Override
    public synchronized void close() {
        for (OpenedStore s : open.values()) {
            try {
                s.close();
            } catch (IOException e) {
                System.err.println("ferry coordinator: closing store " + s.store().uri() + ": " + e.getMessage());
            }
        }
        open.clear();
    }
}
