package io.ferry.model;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Which node keeps a partner copy of which node's images (SCR's PARTNER level): the job's
 * nodes in a ring, each copying to the next, ordered so that consecutive nodes sit in
 * different failure domains (racks, power feeds) whenever the domains allow it. Without
 * domains the ring follows the placement's node order. A node alone has no partner.
 *
 * <p>Domains are given as {@code NODE=DOMAIN,...} (setting {@code cache.partner-domains},
 * from {@code ferry run --failure-domains FILE}); a node not named is a domain of its own.
 */
public final class PartnerRing {
    private PartnerRing() {}

    /** {@code node -> partner} for every node of {@code nodes} (empty for fewer than two). */
    public static Map<String, String> pairs(List<String> nodes, Map<String, String> domainOf) {
        Map<String, String> out = new LinkedHashMap<>();
        if (nodes.size() < 2) {
            return out;
        }
        List<String> ring = interleaved(nodes, domainOf);
        for (int i = 0; i < ring.size(); i++) {
            out.put(ring.get(i), ring.get((i + 1) % ring.size()));
        }
        return out;
    }

    /**
     * The nodes grouped by domain (domains in order of first appearance, the largest first so
     * that it never ends up next to itself when avoidable), then taken one per domain in turn.
     */
    private static List<String> interleaved(List<String> nodes, Map<String, String> domainOf) {
        Map<String, List<String>> byDomain = new LinkedHashMap<>();
        for (String n : nodes) {
            byDomain.computeIfAbsent(domainOf.getOrDefault(n, "node:" + n), d -> new ArrayList<>()).add(n);
        }
        List<List<String>> groups = new ArrayList<>(byDomain.values());
        groups.sort((a, b) -> Integer.compare(b.size(), a.size())); // stable: ties keep their order
        List<String> ring = new ArrayList<>(nodes.size());
        for (int i = 0; ring.size() < nodes.size(); i++) {
            for (List<String> g : groups) {
                if (i < g.size()) {
                    ring.add(g.get(i));
                }
            }
        }
        return ring;
    }

    /** Pairs whose two nodes share a domain (unavoidable when one domain holds over half the nodes). */
    public static List<String> sameDomain(Map<String, String> pairs, Map<String, String> domainOf) {
        List<String> out = new ArrayList<>();
        pairs.forEach((a, b) -> {
            String da = domainOf.get(a);
            if (da != null && da.equals(domainOf.get(b))) {
                out.add(a + "->" + b);
            }
        });
        return out;
    }

    /** Parses {@code NODE=DOMAIN,...}; a bad node name or an empty domain is an error naming it. */
    public static Map<String, String> parseDomains(String text) {
        Map<String, String> out = new LinkedHashMap<>();
        if (text == null || text.isBlank()) {
            return out;
        }
        for (String item : text.split(",")) {
            int eq = item.indexOf('=');
            if (eq <= 0 || eq == item.length() - 1) {
                throw new IllegalArgumentException("bad failure domain '" + item + "': NODE=DOMAIN");
            }
            String node = Placement.requireNode(item.substring(0, eq).trim());
            String domain = item.substring(eq + 1).trim();
            if (domain.isEmpty() || !domain.matches("[A-Za-z0-9._:-]{1,64}")) {
                throw new IllegalArgumentException("bad failure domain '" + domain + "' of node " + node
                        + ": letters, digits, '.', '_', ':' and '-', at most 64");
            }
            if (out.put(node, domain) != null) {
                throw new IllegalArgumentException("node " + node + " is given two failure domains");
            }
        }
        return out;
    }

    /**
     * Reads a failure-domain file: one {@code NODE DOMAIN} per line (also {@code NODE domain=D},
     * as an extra column of a hostfile), {@code #} comments and blank lines ignored. Returns the
     * {@code NODE=DOMAIN,...} text form.
     */
    public static String domainsFromLines(List<String> lines) {
        StringBuilder sb = new StringBuilder();
        int n = 0;
        for (String raw : lines) {
            n++;
            String line = raw.replaceFirst("#.*", "").trim();
            if (line.isEmpty()) {
                continue;
            }
            String[] f = line.split("\\s+");
            String domain = null;
            for (int i = 1; i < f.length; i++) {
                if (f[i].startsWith("domain=")) {
                    domain = f[i].substring("domain=".length());
                } else if (!f[i].contains("=") && domain == null) {
                    domain = f[i];
                }
            }
            if (domain == null) {
                throw new IllegalArgumentException("line " + n + ": '" + raw.trim() + "' names no failure domain"
                        + " (NODE DOMAIN or NODE domain=DOMAIN)");
            }
            sb.append(sb.length() == 0 ? "" : ",").append(f[0]).append('=').append(domain);
        }
        parseDomains(sb.toString()); // the same checks, naming the bad item
        return sb.toString();
    }
}
