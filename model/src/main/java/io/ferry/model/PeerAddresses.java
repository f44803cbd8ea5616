package io.ferry.model;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Where agents reach each other's caches: {@code HOST:PORT} per agent, and lists of
 * {@code NODE=HOST:PORT,...} naming the nodes that may hold a rank's image, nearest first.
 */
public final class PeerAddresses {
    private PeerAddresses() {}

    /** A node's agent and where it serves its cache. */
    public record Peer(String node, String host, int port) {
        public Peer {
            Placement.requireNode(node);
            requireAddress(host + ":" + port);
        }

        public String address() {
            return host.contains(":") ? "[" + host + "]:" + port : host + ":" + port;
        }

        @Override
        public String toString() {
            return node + "=" + address();
        }
    }

    /** Checks {@code HOST:PORT} (a name, an IPv4 address or a bracketed IPv6 one; port 1..65535). */
    public static String requireAddress(String address) {
        if (address == null) {
            throw new IllegalArgumentException("peer address is missing");
        }
        int colon = address.lastIndexOf(':');
        String host = colon < 0 ? "" : address.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        if (colon < 0 || !host.matches("[A-Za-z0-9._:%-]{1,253}")) {
            throw new IllegalArgumentException("bad peer address '" + address + "': HOST:PORT");
        }
        int port;
        try {
            port = Integer.parseInt(address.substring(colon + 1));
        } catch (NumberFormatException e) {
            port = -1;
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("bad peer address '" + address + "': port must be 1..65535");
        }
        return address;
    }

    /** Parses {@code NODE=HOST:PORT,...} (empty: none). */
    public static List<Peer> parse(String text) {
        List<Peer> out = new ArrayList<>();
        if (text == null || text.isEmpty()) {
            return out;
        }
        for (String item : text.split(",")) {
            int eq = item.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("bad peer '" + item + "': NODE=HOST:PORT");
            }
            String address = requireAddress(item.substring(eq + 1));
            int colon = address.lastIndexOf(':');
            String host = address.substring(0, colon).replace("[", "").replace("]", "");
            out.add(new Peer(item.substring(0, eq), host, Integer.parseInt(address.substring(colon + 1))));
        }
        return out;
    }

    /** The text form of {@link #parse}. */
    public static String format(List<Peer> peers) {
        return String.join(",", peers.stream().map(Peer::toString).toList());
    }

    /** A copy of a rank-to-peers map, every value checked; null is empty. */
    public static Map<Integer, String> checked(Map<Integer, String> peers) {
        if (peers == null || peers.isEmpty()) {
            return Map.of();
        }
        Map<Integer, String> out = new TreeMap<>();
        peers.forEach((rank, text) -> {
            Names.requireRank(rank);
            parse(text);
            out.put(rank, text);
        });
        return Collections.unmodifiableMap(out);
    }
}
