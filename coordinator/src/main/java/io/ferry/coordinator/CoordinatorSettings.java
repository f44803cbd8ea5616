package io.ferry.coordinator;

import io.ferry.model.ConfigKey;
import io.ferry.model.ConfigTable;

import java.util.List;
import java.util.Map;

/**
 * The coordinator's settings from its host's configuration ({@code ferry coordinator} and the
 * one-node cluster of {@code ferry run} read them at start-up; a site's setting, never a job's).
 *
 * @param snapshotEvery events folded per events partition between two snapshots of the folded
 *                      state on {@code ferry.snapshots}; 0: none written (a start still loads
 *                      the snapshots others wrote)
 */
public record CoordinatorSettings(long snapshotEvery) {
    public static final ConfigKey<Long> SNAPSHOT_EVERY = ConfigKey.countKey("coordinator.snapshot-every",
            "Events a coordinator folds per partition of ferry.events between two snapshots of its folded state on"
                    + " ferry.snapshots: a restart (or a takeover) loads the newest snapshot and replays at most about"
                    + " this many events per partition. 0 writes none (a start still loads those others wrote). Where"
                    + " ferry.events has a finite retention, each partition must be snapshotted well before the"
                    + " retention deletes what its snapshot folded last. Read by ferry coordinator (and ferry run)"
                    + " from its host's configuration.",
            SnapshotKeeper.DEFAULT_EVERY, 0, 1_000_000_000_000L);
    public static final ConfigTable TABLE = new ConfigTable(List.of(SNAPSHOT_EVERY));

    public CoordinatorSettings {
        if (snapshotEvery < 0) {
            throw new IllegalArgumentException(SNAPSHOT_EVERY.name() + " must be 0 (never) or a number of events, got "
                    + snapshotEvery);
        }
    }

    /** The defaults: a snapshot every {@value SnapshotKeeper#DEFAULT_EVERY} events per partition. */
    public static final CoordinatorSettings DEFAULT = of(Map.of());

    /**
     * From {@code settings} (keys of {@link #TABLE} only; unset ones take their default); a bad one fails naming it.
     */
    public static CoordinatorSettings of(Map<String, String> settings) {
        ConfigTable.Resolved r = TABLE.resolve(settings);
        return new CoordinatorSettings(r.get(SNAPSHOT_EVERY));
    }
}
