package io.ferry.eventlog;

/**
 * How Ferry's topics are created on a Kafka cluster. Applied only when a topic does not
 * exist yet; an existing topic keeps what it has (its partition count is read, not assumed).
 *
 * @param partitions  partitions of the events and commands topics: events are keyed by job,
 *                    commands by node, so each job's events and each node's commands stay in
 *                    order; several coordinators in one group share the jobs by partition
 * @param replication replicas of every topic; {@code 0} means "the site default": 3, or the
 *                    number of brokers when the cluster has fewer (said on stderr)
 */
public record LogSettings(int partitions, short replication) {
    /** The embedded single-node broker: one replica, a few partitions. */
    public static final LogSettings EMBEDDED = new LogSettings(8, (short) 1);
    /** An external cluster: three replicas (fewer only if it has fewer brokers). */
    public static final LogSettings EXTERNAL = new LogSettings(8, (short) 0);

    public LogSettings {
        if (partitions < 1 || partitions > 1024) {
            throw new IllegalArgumentException("kafka partitions must be within 1..1024, got " + partitions);
        }
        if (replication < 0 || replication > 16) {
            throw new IllegalArgumentException("kafka replication factor must be within 1..16 (0: site default), got "
                    + replication);
        }
    }

    /** The replication factor to create topics with on a cluster of {@code brokers} brokers. */
    short replicationFor(int brokers) {
        if (replication > 0) {
            if (replication > brokers) {
                throw new IllegalArgumentException("kafka replication factor " + replication + " needs at least "
                        + replication + " brokers; the cluster has " + brokers);
            }
            return replication;
        }
        return (short) Math.max(1, Math.min(3, brokers));
    }
}
