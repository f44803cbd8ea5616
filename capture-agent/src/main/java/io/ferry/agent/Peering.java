package io.ferry.agent;

import io.ferry.agent.peer.PeerAuth;

/**
 * This node's side of agent-to-agent transfers: where it serves its cache to the other agents
 * ({@code HOST:PORT}, or null where it does not) and the secret its connections to them prove.
 */
record Peering(String address, PeerAuth auth) {
    Peering {
        java.util.Objects.requireNonNull(auth, "auth");
    }
}
