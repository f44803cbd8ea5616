package io.ferry.model;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.IntStream;

/**
 * Which node runs which rank of a job. Written as text in {@link Event.JobStarted}:
 * {@code block:A,B,C} (consecutive ranks per node, as {@code mpirun --map-by slot}),
 * {@code cyclic:A,B,C} (rank r on node r mod n, as {@code --map-by node}) or
 * {@code map:0-3:A,4-7:B} (a hostfile-like map covering every rank exactly once), or
 * {@code launcher:0-3:A,...} (the site's launcher placed the ranks, {@code mpirun} or
 * {@code srun}: Ferry learns each node's ranks as they join, so the map may be partial,
 * {@link #complete()} once every rank joined). The text stays a few bytes per node however
 * many ranks there are. Immutable.
 */
public final class Placement {
    private static final Pattern NODE = Pattern.compile("[A-Za-z0-9._-]{1,128}");
    private final String kind;
    private final int ranks;
    private final List<String> nodes;
    /** Only for {@code map}: each node's ranks, in the order the map names the nodes. */
    private final Map<String, RankSet> map;

    private Placement(String kind, int ranks, List<String> nodes, Map<String, RankSet> map) {
        this.kind = kind;
        this.ranks = ranks;
        this.nodes = List.copyOf(nodes);
        this.map = map;
    }

    /** A node name: the same safe characters as a job id. */
    public static String requireNode(String node) {
        if (node == null || !NODE.matcher(node).matches() || node.equals(".") || node.equals("..")) {
            throw new IllegalArgumentException("unsafe node name " + Names.quote(node)
                    + ": use 1-128 characters of A-Z a-z 0-9 . _ -");
        }
        return node;
    }

    public static Placement block(int ranks, List<String> nodes) {
        return new Placement("block", requireRanks(ranks), checkNodes(nodes, ranks), Map.of());
    }

    public static Placement cyclic(int ranks, List<String> nodes) {
        return new Placement("cyclic", requireRanks(ranks), checkNodes(nodes, ranks), Map.of());
    }

    /** Every rank on one node: the one-machine job. */
    public static Placement single(int ranks, String node) {
        return block(ranks, List.of(node));
    }

    /** A map {@code "0-3:A,4-7:B"}: each rank of 0..ranks-1 exactly once. */
    public static Placement map(String spec, int ranks) {
        return map(spec, ranks, false);
    }

    /** Ranks placed by the site's launcher, none joined yet. */
    public static Placement launcher(int ranks) {
        return new Placement("launcher", requireRanks(ranks), List.of(), Map.of());
    }

    /** Whether the ranks are placed by the site's launcher (nodes known once ranks join). */
    public boolean byLauncher() {
        return kind.equals("launcher");
    }

    /** Whether every rank has a node (always, except for a launcher's placement still being joined). */
    public boolean complete() {
        return !byLauncher() || map.values().stream().mapToInt(RankSet::size).sum() == ranks;
    }

    /** A launcher's placement with {@code joined} ranks on {@code node} as well (a rank joining anew moves there). */
    public Placement joining(String node, RankSet joined) {
        if (!byLauncher()) {
            throw new IllegalStateException("ranks join only a placement made by a launcher, not " + kind);
        }
        requireNode(node);
        Map<String, BitSet> sets = new LinkedHashMap<>();
        for (String n : nodes) {
            BitSet b = new BitSet();
            map.get(n).stream().filter(r -> !joined.contains(r)).forEach(b::set);
            sets.put(n, b);
        }
        BitSet here = sets.computeIfAbsent(node, n -> new BitSet());
        joined.stream().forEach(r -> {
            if (r >= ranks) {
                throw new IllegalArgumentException("rank " + r + " joined, but the job has " + ranks + " ranks");
            }
            here.set(r);
        });
        Map<String, RankSet> out = new LinkedHashMap<>();
        sets.forEach((n, b) -> {
            if (!b.isEmpty()) {
                out.put(n, RankSet.of(b.stream()));
            }
        });
        return new Placement("launcher", ranks, new ArrayList<>(out.keySet()), Map.copyOf(out));
    }

    private static Placement map(String spec, int ranks, boolean partial) {
        requireRanks(ranks);
        if (partial && spec.isEmpty()) {
            return launcher(ranks);
        }
        Map<String, StringBuilder> perNode = new LinkedHashMap<>();
        for (String part : spec.split(",", -1)) {
            int colon = part.lastIndexOf(':');
            if (colon <= 0) {
                throw new IllegalArgumentException("bad --map entry '" + part + "': use RANKS:NODE, e.g. 0-3:node1");
            }
            String node = requireNode(part.substring(colon + 1));
            StringBuilder b = perNode.computeIfAbsent(node, n -> new StringBuilder());
            b.append(b.length() == 0 ? "" : ",").append(part, 0, colon);
        }
        Map<String, RankSet> sets = new LinkedHashMap<>();
        int covered = 0;
        BitSet seen = new BitSet();
        for (var e : perNode.entrySet()) {
            RankSet s = RankSet.parse(e.getValue().toString());
            s.stream().forEach(r -> {
                if (r >= ranks || seen.get(r)) {
                    throw new IllegalArgumentException("--map names rank " + r + (r >= ranks ? " but the job has "
                            + ranks + " ranks" : " twice"));
                }
                seen.set(r);
            });
            covered += s.size();
            sets.put(e.getKey(), s);
        }
        if (partial) {
            return new Placement("launcher", ranks, new ArrayList<>(sets.keySet()), Map.copyOf(sets));
        }
        if (covered != ranks) {
            throw new IllegalArgumentException("--map places " + covered + " of the job's " + ranks + " ranks; rank "
                    + seen.nextClearBit(0) + " has no node");
        }
        return new Placement("map", ranks, new ArrayList<>(sets.keySet()), Map.copyOf(sets));
    }

    /** Parses the text form ({@link #toString()}) for a job of {@code ranks} ranks. */
    public static Placement parse(String text, int ranks) {
        int colon = text == null ? -1 : text.indexOf(':');
        if (colon < 0) {
            throw new IllegalArgumentException("bad placement '" + text
                    + "': block:NODES, cyclic:NODES, map:RANKS:NODE,... or launcher:[RANKS:NODE,...]");
        }
        String kind = text.substring(0, colon);
        String rest = text.substring(colon + 1);
        return switch (kind) {
            case "block" -> block(ranks, List.of(rest.split(",", -1)));
            case "cyclic" -> cyclic(ranks, List.of(rest.split(",", -1)));
            case "map" -> map(rest, ranks);
            case "launcher" -> map(rest, ranks, true);
            default -> throw new IllegalArgumentException("unknown placement '" + kind
                    + "': block, cyclic, map or launcher");
        };
    }

    private static int requireRanks(int ranks) {
        if (ranks < 1 || ranks > RankSet.MAX_RANK + 1) {
            throw new IllegalArgumentException("ranks must be within 1.." + (RankSet.MAX_RANK + 1) + ", got " + ranks);
        }
        return ranks;
    }

    private static List<String> checkNodes(List<String> nodes, int ranks) {
        Set<String> unique = new LinkedHashSet<>();
        for (String n : nodes) {
            if (!unique.add(requireNode(n))) {
                throw new IllegalArgumentException("node " + n + " is named twice");
            }
        }
        if (unique.isEmpty()) {
            throw new IllegalArgumentException("no node to place ranks on");
        }
        if (unique.size() > ranks) {
            throw new IllegalArgumentException(unique.size() + " nodes for " + ranks
                    + " ranks: every node needs a rank");
        }
        return nodes;
    }

    public int ranks() {
        return ranks;
    }

    /** Every node with ranks, in placement order. */
    public List<String> nodes() {
        return nodes;
    }

    /** The node rank {@code rank} runs on. */
    public String nodeOf(int rank) {
        if (rank < 0 || rank >= ranks) {
            throw new IllegalArgumentException("rank " + rank + " is not within 0.." + (ranks - 1));
        }
        return switch (kind) {
            case "block" -> nodes.get(blockIndex(rank));
            case "cyclic" -> nodes.get(rank % nodes.size());
            default -> map.entrySet().stream().filter(e -> e.getValue().contains(rank)).findFirst()
                    .orElseThrow(() -> new IllegalArgumentException("rank " + rank + " has not joined yet")).getKey();
        };
    }

    /** The ranks {@code node} runs (empty if none). */
    public RankSet ranksOn(String node) {
        int i = nodes.indexOf(node);
        if (i < 0) {
            return RankSet.parse("");
        }
        return switch (kind) {
            case "block" -> RankSet.range(blockStart(i), blockStart(i + 1));
            case "cyclic" -> RankSet.of(IntStream.iterate(i, r -> r < ranks, r -> r + nodes.size()));
            default -> map.get(node);
        };
    }

    /** First rank of node {@code i} in block placement: the first {@code ranks % n} nodes take one more. */
    private int blockStart(int i) {
        int base = ranks / nodes.size();
        int extra = ranks % nodes.size();
        return i * base + Math.min(i, extra);
    }

    private int blockIndex(int rank) {
        int base = ranks / nodes.size();
        int extra = ranks % nodes.size();
        int big = extra * (base + 1);
        return rank < big ? rank / (base + 1) : extra + (rank - big) / base;
    }

    /** This placement with {@code lost}'s ranks moved to {@code to} (another node of it, or a new one). */
    public Placement moving(String lost, String to) {
        requireNode(to);
        Map<String, StringBuilder> m = new LinkedHashMap<>();
        for (String n : nodes) {
            if (!n.equals(lost)) {
                m.put(n, new StringBuilder(ranksOn(n).toString()));
            }
        }
        StringBuilder target = m.computeIfAbsent(to, n -> new StringBuilder());
        String moved = ranksOn(lost).toString();
        target.append(target.length() == 0 || moved.isEmpty() ? "" : ",").append(moved);
        StringBuilder spec = new StringBuilder();
        for (var e : m.entrySet()) {
            for (String range : e.getValue().toString().split(",")) {
                if (!range.isEmpty()) {
                    spec.append(spec.length() == 0 ? "" : ",").append(range).append(':').append(e.getKey());
                }
            }
        }
        return map(spec.toString(), ranks);
    }

    @Override
    public String toString() {
        if (!kind.equals("map") && !byLauncher()) {
            return kind + ":" + String.join(",", nodes);
        }
        StringBuilder b = new StringBuilder(kind).append(':');
        String sep = "";
        for (String n : nodes) {
            for (String range : map.get(n).toString().split(",")) {
                b.append(sep).append(range).append(':').append(n);
                sep = ",";
            }
        }
        return b.toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Placement p && p.toString().equals(toString()) && p.ranks == ranks;
    }

    @Override
    public int hashCode() {
        return toString().hashCode() * 31 + ranks;
    }
}
