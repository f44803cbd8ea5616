package io.ferry.agent.capture;

import java.io.IOException;
import java.util.Optional;

/**
 * One DMTCP computation for every rank of a job across its nodes, as DMTCP's papers run it: the
 * agent of rank 0's node (the lead) starts the one {@code dmtcp_coordinator} of each start of
 * the job on its own routable address and asks every generation's one blocking checkpoint; the
 * other nodes' ranks join that coordinator, and their agents learn where it listens and how each
 * checkpoint ended by asking the lead's agent ({@link DmtcpBoard}, over the peer port). Each node
 * still collects and stages its own ranks' files.
 *
 * @param job      the job
 * @param leads    whether this node is the lead
 * @param leadHost the lead's address, where its coordinator is reached ({@code --coord-host})
 * @param launchId the start of the job this launch belongs to: a node joins that start's coordinator only
 * @param nranks   the job's size: every rank joins the one coordinator
 * @param board    this agent's board, where a lead posts what the others ask
 * @param lead     asks the lead's agent a question of {@link DmtcpBoard}
 */
public record DmtcpSpan(String job, boolean leads, String leadHost, long launchId, int nranks, DmtcpBoard board,
                        Asker lead) {
    /** Asks the lead's agent: the text after its OK, empty for "not yet", an exception for an error. */
    @FunctionalInterface
    public interface Asker {
        Optional<String> ask(String op, long number) throws IOException;
    }
}
