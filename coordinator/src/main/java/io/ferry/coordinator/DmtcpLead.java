package io.ferry.coordinator;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lead of a DMTCP job on more than one node Ferry placed: rank 0's node, whose agent runs the job's one DMTCP
 * coordinator and tells the other nodes where it is, so the sockets between ranks on different nodes are
 * checkpointed together. Known from the agents' presences ({@link AgentEpochs}) or the job's own peers.
 */
final class DmtcpLead {
    private static final Logger LOG = LoggerFactory.getLogger(DmtcpLead.class);
    private final AgentEpochs agents;

    DmtcpLead(AgentEpochs agents) {
        this.agents = agents;
    }

    /**
     * Rank 0's node as {@code NODE=HOST:PORT}. Empty for other jobs, and where that agent's peer address is not
     * known (no presence heard yet, or it serves no peers): each node's ranks are then a computation of their own,
     * as on one node.
     */
    String of(JobView j) {
        if (!spans(j)) {
            return "";
        }
        String node = j.placement.nodeOf(0);
        String address = agents.peerOf(node);
        if (address == null) {
            address = j.peers.get(node);
        }
        if (address == null) {
            LOG.warn("job " + j.job + ": the agent of " + node + " (rank 0) serves no peers that are known: each node's"
                    + " DMTCP ranks are checkpointed as a computation of their own (sockets across nodes are not)");
            return "";
        }
        return node + "=" + address;
    }

    /** A job with a lead whose agent this coordinator has not heard yet (a heard agent without a peer port is). */
    boolean notHeardYet(JobView j) {
        String node = spans(j) ? j.placement.nodeOf(0) : null;
        return node != null && agents.of(node) < 0 && j.peers.get(node) == null;
    }

    private static boolean spans(JobView j) {
        return "dmtcp".equals(j.started.launch().capture()) && !j.started.where().byLauncher()
                && j.placement.nodes().size() >= 2;
    }
}
