package io.ferry.model;

/** An instruction on the commands topic, keyed by the node (or "coordinator") that carries it out. */
public sealed interface Command {
    String job();

    /** Agent: quiesce and capture every rank of this job on this node for {@code generation}. */
    record Capture(String job, long generation) implements Command {
        public Capture {
            Names.requireJob(job);
            Names.requireGeneration(generation);
        }
    }

    /**
     * Agent: (re)start this job's ranks on {@code node}: stop any it runs, materialise each
     * rank's image of {@code generation} from the nearest tier that verifies (-1: start from
     * the beginning), report {@link Event.ImagesRestored} or {@link Event.RestoreFailed}, and
     * launch. An empty {@code ranks} stops the job's ranks there.
     *
     * @param ranks  the ranks this node runs ({@link RankSet}'s text form)
     * @param nranks the job's size
     * @param cause  why: "start", or what triggered the rollback
     * @param adopt  the ranks were started by the site's launcher and wait, registered with
     *               the agent ({@code ferry rank}): restore their images and let them go on,
     *               leaving the node's other ranks of the job alone
     */
    record Launch(String job, String node, long generation, String ranks, int nranks, String store, LaunchSpec launch,
                  String cause, boolean adopt) implements Command {
        public Launch {
            Names.requireJob(job);
            Placement.requireNode(node);
            RankSet.parse(ranks);
            java.util.Objects.requireNonNull(launch, "launch");
            java.util.Objects.requireNonNull(store, "store");
        }

        public Launch(String job, String node, long generation, String ranks, int nranks, String store, LaunchSpec launch,
                      String cause) {
            this(job, node, generation, ranks, nranks, store, launch, cause, false);
        }

        public RankSet rankSet() {
            return RankSet.parse(ranks);
        }
    }

    /**
     * Agent ({@code ferry restart --dry-run}): say, without copying anything, where each of
     * {@code ranks} would restore generation {@code generation} from on this node; answered
     * with {@link Event.RestartPlanned} carrying {@code request}.
     *
     * @param settings the job's store settings (no secrets: the agent adds its own)
     */
    record PlanRestart(String job, String node, long generation, String ranks, String store,
                       java.util.Map<String, String> settings, String request) implements Command {
        public PlanRestart {
            Names.requireJob(job);
            Placement.requireNode(node);
            RankSet.parse(ranks);
            settings = java.util.Map.copyOf(settings);
        }
    }

    /** Agent ({@code ferry chaos kill-rank}): SIGKILL rank {@code rank} of the job, as a crash would. */
    record KillRank(String job, int rank) implements Command {
        public KillRank {
            Names.requireJob(job);
            if (rank < 0) {
                throw new IllegalArgumentException("rank must be >= 0, got " + rank);
            }
        }
    }

    /**
     * Agent ({@code ferry chaos kill-node}): the node is lost, as a power cut would do it: every
     * rank of every job there is SIGKILLed, the node's cache directory removed, and the agent
     * ends at once without a word. Not about one job: {@link #job()} is empty.
     */
    record KillNode(String node) implements Command {
        public KillNode {
            Placement.requireNode(node);
        }

        @Override
        public String job() {
            return "";
        }
    }

    /** Agent: the job is over; finish staging what is cached, then let go of the job. */
    record Release(String job) implements Command {
        public Release {
            Names.requireJob(job);
        }
    }

    /** Coordinator: roll the job back to {@code generation} (-1: the newest established one), from {@code ferry restart}. */
    record Restart(String job, long generation, String cause) implements Command {
        public Restart {
            Names.requireJob(job);
        }
    }

    /** Coordinator: take a checkpoint now (from {@code ferry checkpoint}). */
    record RequestCheckpoint(String job) implements Command {
        public RequestCheckpoint {
            Names.requireJob(job);
        }
    }
}
