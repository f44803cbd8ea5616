package io.ferry.model;

import java.util.Map;
import java.util.Objects;

/** An instruction on the commands topic, keyed by the node (or "coordinator") that carries it out. */
public sealed interface Command {
    String job();

    /**
     * Agent: quiesce and capture every rank of this job on this node for {@code generation};
     * then, with a {@code partner} ({@code NODE=HOST:PORT}, empty for none), copy the images
     * into that node's cache as well ({@code ferry run --partner}).
     */
    record Capture(String job, long generation, String partner) implements Command {
        public Capture {
            Names.requireJob(job);
            Names.requireGeneration(generation);
            partner = partner == null ? "" : partner;
            if (!partner.isEmpty()) {
                PeerAddresses.parse(partner);
            }
        }

        public Capture(String job, long generation) {
            this(job, generation, "");
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
     * @param peers  for a rank whose image other nodes' caches may hold (where it ran, its
     *               partner), those nodes as {@code NODE=HOST:PORT,...}, nearest first
     *               ({@link PeerAddresses}); asked when this node's own cache has no copy
     * @param lead     for ranks that one computation spans across nodes (DMTCP, whose one coordinator
     *                 drains and restores the sockets between them): the node whose agent runs that
     *                 coordinator, rank 0's, as {@code NODE=HOST:PORT} (where its agent answers the
     *                 others); empty where each node's ranks are a computation of their own
     * @param launchId the same for every node's launch of one (re)start of the job and different for
     *                 the next: what a node asks the lead for is that start's coordinator, never an
     *                 earlier one's (0: none)
     */
    record Launch(String job, String node, long generation, String ranks, int nranks, String store, LaunchSpec launch,
                  String cause, boolean adopt, Map<Integer, String> peers, String lead, long launchId)
            implements Command {
        public Launch {
            Names.requireJob(job);
            Placement.requireNode(node);
            RankSet.parse(ranks);
            Objects.requireNonNull(launch, "launch");
            Objects.requireNonNull(store, "store");
            peers = PeerAddresses.checked(peers);
            lead = lead == null ? "" : lead;
            if (!lead.isEmpty() && PeerAddresses.parse(lead).size() != 1) {
                throw new IllegalArgumentException("a launch's lead is one NODE=HOST:PORT, got '" + lead + "'");
            }
            if (launchId < 0) {
                throw new IllegalArgumentException("a launch id is >= 0, got " + launchId);
            }
        }

        public Launch(String job, String node, long generation, String ranks, int nranks, String store,
                      LaunchSpec launch, String cause, boolean adopt, Map<Integer, String> peers) {
            this(job, node, generation, ranks, nranks, store, launch, cause, adopt, peers, "", 0);
        }

        /** The lead node's name, empty where there is none. */
        public String leadNode() {
            return lead.isEmpty() ? "" : PeerAddresses.parse(lead).get(0).node();
        }

        public Launch(String job, String node, long generation, String ranks, int nranks, String store,
                      LaunchSpec launch, String cause, boolean adopt) {
            this(job, node, generation, ranks, nranks, store, launch, cause, adopt, Map.of());
        }

        public Launch(String job, String node, long generation, String ranks, int nranks, String store,
                      LaunchSpec launch, String cause) {
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
     * @param peers    as {@link Launch#peers()}
     */
    record PlanRestart(String job, String node, long generation, String ranks, String store,
                       Map<String, String> settings, String request, Map<Integer, String> peers)
            implements Command {
        public PlanRestart {
            Names.requireJob(job);
            Placement.requireNode(node);
            RankSet.parse(ranks);
            settings = Map.copyOf(settings);
            peers = PeerAddresses.checked(peers);
        }

        public PlanRestart(String job, String node, long generation, String ranks, String store,
                           Map<String, String> settings, String request) {
            this(job, node, generation, ranks, store, settings, request, Map.of());
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

    /**
     * Coordinator: roll the job back to {@code generation} (-1: the newest established one), from
     * {@code ferry restart}.
     */
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

    /**
     * Coordinator: halt the job before {@code deadlineMillis} (epoch milliseconds): a final
     * checkpoint, timed by the job's own forecast to be established before it, then the job
     * stops (from {@code ferry halt}, or SIGTERM to {@code ferry run}).
     */
    record Halt(String job, long deadlineMillis, String why) implements Command {
        public Halt {
            Names.requireJob(job);
            if (deadlineMillis <= 0) {
                throw new IllegalArgumentException("halt of " + job + ": no deadline");
            }
            why = why == null ? "" : why;
        }
    }
}
