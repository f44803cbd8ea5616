package io.ferry.coordinator;

import io.ferry.model.PartnerRing;
import io.ferry.model.Placement;
import io.ferry.model.RankSet;
import io.ferry.staging.StagingConfig;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Which other nodes' caches may hold a job's images, for the commands that need them: the
 * partner each node copies to after a capture ({@code ferry run --partner}), and, for a
 * restart, the nodes that may hold a rank's image of a generation (where it ran, then that
 * node's partner), limited to agents heard from recently. Computed from the job's placement
 * and settings, nothing kept per rank.
 */
public final class PeerHints {
    /**
     * An agent silent longer than this is not asked: its host has likely left the job (an
     * allocation ended). Agents skip a peer they cannot connect to for the rest of a restore.
     */
    public static final long FRESH_MILLIS = 30 * 60_000;

    private PeerHints() {}

    /** The job's partner pairs on {@code placement} ({@code node -> partner}), empty when partner copies are off. */
    public static Map<String, String> partners(JobView j, Placement placement) {
        if (j.started == null || placement == null || placement.byLauncher() && !placement.complete()) {
            return Map.of();
        }
        Optional<Map<String, String>> domains = StagingConfig.partner(j.started.launch().settings());
        return domains.map(d -> PartnerRing.pairs(placement.nodes(), d)).orElse(Map.of());
    }

    /** The partner {@code node} copies its images of the next generation to ({@code NODE=HOST:PORT}), or empty. */
    static String captureTarget(JobView j, Map<String, String> partners, String node) {
        String partner = partners.get(node);
        String address = partner == null ? null : j.peers.get(partner);
        return address == null ? "" : partner + "=" + address;
    }

    /**
     * For each of {@code ranks} restarting generation {@code g} on {@code landing}: the other
     * nodes that may hold its image ({@code NODE=HOST:PORT,...}, where it ran first, then that
     * node's partner; the partner first where the job's ranks were moved off that node), only those
     * heard from within {@link #FRESH_MILLIS} of {@code nowMillis}; ranks with none are left out.
     */
    public static Map<Integer, String> forRestart(JobView j, long g, RankSet ranks, String landing, long nowMillis) {
        GenerationView gv = j.generations.get(g);
        Map<Integer, String> out = new TreeMap<>();
        if (gv == null || gv.placement == null || gv.placement.byLauncher() && !gv.placement.complete()) {
            return out;
        }
        Map<String, String> partners = partners(j, gv.placement);
        for (int r : ranks.toList()) {
            if (r >= gv.placement.ranks()) {
                continue;
            }
            String origin = gv.placement.nodeOf(r);
            String partner = partners.get(origin);
            // A node the job's ranks were moved off (lost) is asked after its partner: its cache is likely gone
            // with it, and a host that is down answers a connection with nothing, so asking it first cost every
            // restore after a node loss the peers' connect timeout (5 s) before the partner was asked.
            boolean movedOff = j.placement != null && !j.placement.nodes().contains(origin);
            List<String> asked = partner == null ? List.of(origin)
                    : movedOff ? List.of(partner, origin) : List.of(origin, partner);
            List<String> holders = new ArrayList<>();
            for (String node : asked) {
                add(j, holders, node, landing, nowMillis);
            }
            if (!holders.isEmpty()) {
                out.put(r, String.join(",", holders));
            }
        }
        return out;
    }

    private static void add(JobView j, List<String> holders, String node, String landing, long nowMillis) {
        String address = j.peers.get(node);
        Long seen = j.peerSeenMillis.get(node);
        if (!node.equals(landing) && address != null && seen != null && nowMillis - seen < FRESH_MILLIS) {
            holders.add(node + "=" + address);
        }
    }
}
