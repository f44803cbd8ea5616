package io.ferry.model;

import java.util.Objects;

/**
 * The checks of an {@link Event}'s values beyond the names that identify it (job, generation,
 * rank, node: {@link Names}, {@link Placement}, checked in each record itself), one method per
 * event that has any, called from its compact constructor. Each throws
 * {@link IllegalArgumentException} saying what is wrong, so an event that fails one is not
 * decoded either ({@link EventCodec}), and the coordinator parks it instead of folding it.
 * Stateless.
 */
final class EventChecks {
    private EventChecks() {
    }

    /** {@link Event.JobStarted}: a rank count in range, a placement of that many ranks, a launch. */
    static void jobStarted(int ranks, String placement, LaunchSpec launch) {
        if (ranks < 1 || ranks > RankSet.MAX_RANK + 1) {
            throw new IllegalArgumentException("ranks must be within 1.." + (RankSet.MAX_RANK + 1)
                    + ", got " + ranks);
        }
        Placement.parse(placement, ranks); // validated here, so a bad one is parked, never folded
        Objects.requireNonNull(launch, "launch");
    }

    /** {@link Event.ImageCaptured}: an estimate of the bytes staging writes, or -1 (none). */
    static void expectedWritten(long expectedWrittenBytes) {
        if (expectedWrittenBytes < -1) {
            throw new IllegalArgumentException("expectedWrittenBytes must be -1 (unknown) or more, got "
                    + expectedWrittenBytes);
        }
    }

    /** {@link Event.ImageStaged}: a manifest's SHA-256 in hex, or "" (not known). */
    static void manifest(String manifest) {
        if (!manifest.isEmpty() && !Names.isSha256Hex(manifest)) {
            throw new IllegalArgumentException("manifest must be 64 lower-case hex digits, got " + manifest);
        }
    }

    /** {@link Event.PredictionMade}: sizes and counts in range, a share of bytes read from 0 to 1. */
    static void prediction(long rawBytes, int ranks, int basedOn, long writtenBytes, double readShare) {
        if (rawBytes < 0 || ranks < 1 || basedOn < 0 || writtenBytes < -1) {
            throw new IllegalArgumentException("prediction needs rawBytes >= 0, ranks >= 1, basedOn"
                    + " >= 0, writtenBytes >= -1");
        }
        if (!(readShare >= 0 && readShare <= 1)) {
            throw new IllegalArgumentException("prediction needs a readShare from 0 to 1, got " + readShare);
        }
    }

    /** {@link Event.StagingProgress}: 0 <= fresh <= read <= total, and written >= 0. */
    static void stagingProgress(long readBytes, long totalBytes, long freshBytes, long writtenBytes) {
        if (readBytes < 0 || totalBytes < readBytes || freshBytes < 0 || freshBytes > readBytes
                || writtenBytes < 0) {
            throw new IllegalArgumentException("staging progress needs 0 <= fresh <= read <= total"
                    + " and written >= 0, got read "
                    + readBytes + ", total " + totalBytes + ", fresh " + freshBytes + ", written " + writtenBytes);
        }
    }

    /** {@link Event.StoreHealthReported}: counters, none negative. */
    static void storeCounters(long calls, long retries, long failed, long rejected) {
        if (calls < 0 || retries < 0 || failed < 0 || rejected < 0) {
            throw new IllegalArgumentException("store counters must be >= 0");
        }
    }

    /** {@link Event.CacheReported}: sizes and counts, none negative, a retention of one or more. */
    static void cacheReport(long capacityBytes, long freeBytes, long jobBytes, int generations,
            int keepGenerations) {
        if (capacityBytes < 0 || freeBytes < 0 || jobBytes < 0 || generations < 0 || keepGenerations < 1) {
            throw new IllegalArgumentException("cache report needs sizes >= 0 and keepGenerations >= 1");
        }
    }

    /**
     * {@link Event.AgentPresent}: an incarnation in hex, a host and a home of bounded length, an
     * offset or -1, an interval from 1 ms to 1 h, and a peer address or "" (none).
     */
    static void presence(String incarnation, String host, String home, long intervalMillis, long epoch,
            String peer) {
        if (incarnation == null || !incarnation.matches("[0-9a-f]{8,64}")) {
            throw new IllegalArgumentException("an agent's incarnation must be 8-64 lower-case hex digits, got "
                    + Names.quote(incarnation));
        }
        if (host == null || host.isEmpty() || host.length() > 255 || home == null || home.length() > 4096) {
            throw new IllegalArgumentException("an agent's presence needs a host (1-255 characters) and a home");
        }
        if (epoch < -1) {
            throw new IllegalArgumentException("an agent's epoch is an offset or -1, got " + epoch);
        }
        if (intervalMillis < 1 || intervalMillis > 3_600_000) {
            throw new IllegalArgumentException("an agent's presence interval must be 1 ms to 1 h, got "
                    + intervalMillis);
        }
        if (!peer.isEmpty()) {
            PeerAddresses.requireAddress(peer);
        }
    }

    /** {@link Event.LauncherRequested}: attempts count from 1. */
    static void launcherAttempt(int attempt) {
        if (attempt < 1) {
            throw new IllegalArgumentException("launcher attempt must be >= 1, got " + attempt);
        }
    }

    /** {@link Event.PartnerCopied}: the bytes copied, not negative. */
    static void copiedBytes(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("bytes must be >= 0, got " + bytes);
        }
    }

    /** {@link Event.JobPlaced}: {@link Placement}'s text form, at least in outline. */
    static void placement(String placement) {
        if (placement == null || !placement.contains(":")) {
            throw new IllegalArgumentException("bad placement " + placement);
        }
    }

    /** {@link Event.HaltRequested}: a deadline. */
    static void deadline(String job, long deadlineMillis) {
        if (deadlineMillis <= 0) {
            throw new IllegalArgumentException("halt of " + job + ": no deadline");
        }
    }
}
