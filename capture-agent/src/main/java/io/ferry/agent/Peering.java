package io.ferry.agent;

import io.ferry.agent.capture.DmtcpBoard;
import io.ferry.agent.capture.DmtcpSpan;
import io.ferry.agent.peer.PeerAuth;
import io.ferry.agent.peer.PeerClient;
import io.ferry.model.Command;
import io.ferry.model.PeerAddresses;

import java.util.Objects;

/**
 * This node's side of agent-to-agent transfers: where it serves its cache to the other agents
 * ({@code HOST:PORT}, or null where it does not), the secret its connections to them prove, and
 * the board on which it answers them about the computations it leads.
 */
record Peering(String address, PeerAuth auth, DmtcpBoard board) {
    Peering {
        Objects.requireNonNull(auth, "auth");
        Objects.requireNonNull(board, "board");
    }

    /**
     * The job's one DMTCP computation across nodes for launch {@code l}, or null where it has none
     * (no lead named, or this node cannot take part: it serves no peers and so cannot lead).
     */
    DmtcpSpan span(Command.Launch l, String node) {
        if (l.lead().isEmpty() || !"dmtcp".equals(l.launch().capture())) {
            return null;
        }
        PeerAddresses.Peer lead = PeerAddresses.parse(l.lead()).get(0);
        boolean leads = lead.node().equals(node);
        return new DmtcpSpan(l.job(), leads, lead.host(), l.launchId(), l.nranks(), board,
                (op, number) -> PeerClient.ask(lead, op, l.job(), number, auth));
    }
}
