package io.ferry.coordinator;

import io.ferry.model.Event;
import io.ferry.staging.OpenedStore;
import io.ferry.staging.Repository;
import io.ferry.staging.crypt.Keys;

import java.io.Closeable;
import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The stores of the jobs a coordinator serves, each opened once from the job's start event
 * (URI and settings; credentials from the coordinator's own environment) and kept open.
 * Thread-safe (the coordinator thread and its committers share it); a store that hangs as it opens
 * holds up only the callers of that store.
 */
final class JobStores implements Closeable {
    /** One store's opening: its own lock, so that a store that hangs while it opens holds up no other job's. */
    private static final class Opening {
        volatile OpenedStore store;
    }

    private final Map<String, Opening> open = new HashMap<>();
    private final Map<String, String> secrets;
    private boolean closed;

    /** @param secrets store credentials known to this process, added to every job's settings (never logged) */
    JobStores(Map<String, String> secrets) {
        this.secrets = Map.copyOf(secrets);
    }

    /** The repository of {@code started}'s store, opened on first use (by one caller; that store's others wait). */
    Repository of(Event.JobStarted started) throws IOException {
        String key = started.store() + "\n" + started.launch().settings();
        Opening o;
        synchronized (this) {
            if (closed) {
                throw new IOException("the coordinator is closing");
            }
            o = open.computeIfAbsent(key, k -> new Opening());
        }
        synchronized (o) {
            if (o.store == null) {
                Map<String, String> settings = new HashMap<>(started.launch().settings());
                settings.putAll(secrets);
                // The coordinator reads manifests and writes markers, never a blob: it needs no key of encryption at
                // rest, and the key file a job names need not exist on the coordinator's host.
                settings.keySet().removeIf(Keys.TABLE::knows);
                OpenedStore opened = OpenedStore.open(started.store(), settings, Map.of());
                boolean late;
                synchronized (this) { // under the lock close() reads the opened stores with: never open after it
                    late = closed;
                    if (!late) {
                        o.store = opened;
                    }
                }
                if (late) {
                    closeQuietly(opened);
                    throw new IOException("the coordinator is closing");
                }
            }
            return o.store.pipeline().repository();
        }
    }

    /**
     * Closes the stores opened so far; one still opening (its store hangs) is closed by its opener
     * once its open returns.
     */
    @Override
    public void close() {
        List<OpenedStore> opened;
        synchronized (this) {
            closed = true;
            opened = open.values().stream().map(o -> o.store).filter(Objects::nonNull).toList();
            open.clear();
        }
        opened.forEach(JobStores::closeQuietly);
    }

    private static void closeQuietly(OpenedStore s) {
        try {
            s.close();
        } catch (IOException e) {
            System.err.println("ferry coordinator: closing store " + s.store().uri() + ": " + e.getMessage());
        }
    }
}
