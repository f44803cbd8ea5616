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
     */
    record Launch(String job, String node, long generation, String ranks, int nranks, String store, LaunchSpec launch,
                  String cause) implements Command {
        public Launch {
            Names.requireJob(job);
            Placement.requireNode(node);
            RankSet.parse(ranks);
            java.util.Objects.requireNonNull(launch, "launch");
            java.util.Objects.requireNonNull(store, "store");
        }

        public RankSet rankSet() {
            return RankSet.parse(ranks);
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
