package io.ferry.coordinator;

import io.ferry.model.Event;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The newest epoch heard of each node's agent ({@link Event.AgentPresent}), which every command
 * to that node carries: an older agent of the name still alive (cut off, then back) sees a
 * higher epoch than its own and leaves the command to the newer one. Learned live from the
 * heartbeats topic, never replayed: until a node's agent is heard (within one of its
 * intervals after a coordinator starts), its commands carry none and any agent of the name
 * takes them. Also where the newest agent of each node serves its cache to the others (its
 * peer address, known before any job runs there). Thread-safe.
 */
final class AgentEpochs {
    private final Map<String, Long> newest = new ConcurrentHashMap<>();
    private final Map<String, String> peers = new ConcurrentHashMap<>();

    void heard(Event.AgentPresent p) {
        if (p.epoch() >= 0) {
            long now = newest.merge(p.node(), p.epoch(), Math::max);
            if (now == p.epoch()) {
                if (p.peer().isEmpty() || p.leaving()) {
                    peers.remove(p.node());
                } else {
                    peers.put(p.node(), p.peer());
                }
            }
        }
    }

    /** Where the newest agent heard of {@code node} serves its cache ({@code HOST:PORT}), or null. */
    String peerOf(String node) {
        return peers.get(node);
    }

    /** The newest epoch of {@code node}'s agent, or -1 when none was heard. */
    long of(String node) {
        return newest.getOrDefault(node, -1L);
    }
}
