package io.ferry.agent;

import io.ferry.model.ConfigKey;
import io.ferry.model.ConfigTable;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * How long a node agent keeps the cache of a job that is over ({@code ferry agent} reads it from
 * its host's configuration, a site's setting, never a job's): see {@link CacheReclaimer}.
 *
 * @param finished after a job finished successfully, its whole directory goes; a job directory
 *                 the event log does not know goes (all but its images not yet staged) once
 *                 untouched this long
 * @param failed   after a job failed, its staged images go (a run of it again then restores from
 *                 the store); its images not yet staged stay
 */
public record CacheRetention(Duration finished, Duration failed) {
    public static final ConfigKey<Duration> FINISHED = ConfigKey.durationKey("cache.finished-retention",
            "How long a node agent keeps a job's images in its cache after the job finished successfully; then the"
                    + " job's directory is removed, staged or not. A job directory the event log does not know (a log"
                    + " started afresh, a cache moved between sites) goes once untouched this long, all but its images"
                    + " not yet staged. Read by ferry agent from its host's configuration.",
            "24h", Duration.ZERO, Duration.ofDays(36500));
    public static final ConfigKey<Duration> FAILED = ConfigKey.durationKey("cache.failed-retention",
            "How long a node agent keeps a failed job's images in its cache, for running the job"
                    + " again to restart from; then the images the store holds are removed (a run"
                    + " again restores them from the store) and those not yet staged stay until a run"
                    + " of the job stages them. Read by ferry agent from its host's configuration.",
            "168h", Duration.ZERO, Duration.ofDays(36500));
    public static final ConfigTable TABLE = new ConfigTable(List.of(FINISHED, FAILED));

    public CacheRetention {
        if (finished.isNegative() || failed.isNegative()) {
            throw new IllegalArgumentException("cache retention must be >= 0, got " + finished + " and " + failed);
        }
    }

    /** The defaults: 24 h after success, 7 days after failure. */
    public static final CacheRetention DEFAULT = of(Map.of());

    /** From {@code settings} (keys of {@link #TABLE} only; unset ones take their default). */
    public static CacheRetention of(Map<String, String> settings) {
        ConfigTable.Resolved r = TABLE.resolve(settings);
        return new CacheRetention(r.get(FINISHED), r.get(FAILED));
    }
}
