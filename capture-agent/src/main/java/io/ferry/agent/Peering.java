package io.ferry.agent;

import io.ferry.agent.peer.PeerAuth;

/**
 * This node's side of agent-to-agent transfers: where it serves its cache to the other agents
 * ({@code HOST:PORT}, or null where it does not), the secret its connections to them prove, and
 * the board on which it answers them about the computations it leads.
 */
record Peering(String address, PeerAuth auth, io.ferry.agent.capture.DmtcpBoard board) {
    Peering {
        java.util.Objects.requireNonNull(auth, "auth");
        java.util.Objects.requireNonNull(board, "board");
    }

    /**
     * The job's one DMTCP computation across nodes for launch {@code l}, or null where it has none
     * (no lead named, or this node cannot take part: it serves no peers and so cannot lead).
     */
    io.ferry.agent.capture.DmtcpSpan span(io.ferry.model.Command.Launch l, String node) {
        if (l.lead().isEmpty() || !"dmtcp".equals(l.launch().capture())) {
            return null;
        }
        io.ferry.model.PeerAddresses.Peer lead = io.ferry.model.PeerAddresses.parse(l.lead()).get(0);
        boolean leads = lead.node().equals(node);
        return new io.ferry.agent.capture.DmtcpSpan(l.job(), leads, lead.host(), l.launchId(), l.nranks(), board,
                (op, number) -> io.ferry.agent.peer.PeerClient.ask(lead, op, l.job(), number, auth));
    }
}
