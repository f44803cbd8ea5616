package io.ferry.agent.peer;

import java.net.InetSocketAddress;
import java.util.Objects;

/**
 * How an agent takes part in agent-to-agent transfers: where it serves its cache ({@code listen},
 * null: not served) and the secret its server requires and its connections prove.
 */
public record PeerEndpoint(InetSocketAddress listen, PeerAuth auth) {
    public PeerEndpoint {
        Objects.requireNonNull(auth, "auth (PeerAuth.NONE for none)");
    }
}
