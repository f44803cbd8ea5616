package io.ferry.coordinator;

import io.ferry.model.ConfigKey;
import io.ferry.staging.StagingConfig;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** A job's recovery settings as the coordinator reads them: the backoff between rollbacks, and their limit. */
final class RecoveryPolicy {
    /** Unreadable settings already said (from an older writer's events): each is said once. */
    private static final Set<String> UNREADABLE_SAID = ConcurrentHashMap.newKeySet();

    private RecoveryPolicy() {}

    /** The wait after {@code without} rollbacks in a row without progress: none after none. */
    static long backoffMillis(Map<String, String> settings, int without) {
        if (without == 0) {
            return 0;
        }
        long base = setting(settings, StagingConfig.RECOVERY_BACKOFF).toMillis();
        long cap = setting(settings, StagingConfig.RECOVERY_MAX_BACKOFF).toMillis();
        return Math.min(cap, base << Math.min(without - 1, 30));
    }

    /** A job's setting, or the key's default where it is missing or (from an older writer) unreadable. */
    static <T> T setting(Map<String, String> settings, ConfigKey<T> key) {
        String v = settings.get(key.name());
        if (v != null) {
            try {
                return key.parse(v);
            } catch (IllegalArgumentException e) {
                if (UNREADABLE_SAID.add(key.name() + "=" + v)) { // once, not on every tick
                    System.err.println("ferry coordinator: ignoring " + key.name() + "=" + v + ": " + e.getMessage());
                }
            }
        }
        return key.parse(key.defaultValue());
    }
}
