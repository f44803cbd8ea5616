package io.ferry.coordinator;

import io.ferry.model.Event;
import io.ferry.model.LaunchSpec;
import io.ferry.model.Placement;
import io.ferry.model.RankSet;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Array;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import java.util.zip.CRC32;

import static io.ferry.coordinator.GenerationView.State.CAPTURED;
import static io.ferry.coordinator.GenerationView.State.OPEN;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Tests of {@link FoldSnapshot}'s promise, a snapshot plus the tail is the whole fold: random logs are cut
 * anywhere and the states compared field by field, private ones too, so that a field the codec forgets
 * fails here rather than in a coordinator that takes over from a snapshot.
 */
class FoldSnapshotTest {
    /** The coordinator's own decision state: not folded, so not carried; decode leaves it as a replay would. */
    private static final Set<String> NOT_FOLDED = Set.of("JobView.pendingRollback", "JobView.judgedSinceMillis",
            "JobView.pendingSinceMillis", "JobView.pendingNoticedFor", "JobView.heartbeatsFreshUntil",
            "JobView.silentSinceMillis", "GenerationView.markerWritten", "GenerationView.failing",
            "GenerationView.capturesResent");
    private static final List<String> NODES = List.of("n1", "n2", "n3", "n4", "n5", "n6");
    private static final List<String> TIERS = List.of("local", "partner", "remote");
    private static final List<String> CIRCUITS = List.of("CLOSED", "OPEN", "HALF_OPEN");
    private static final Map<Class<?>, List<Field>> FIELDS = new ConcurrentHashMap<>();

    /** An event, when it was logged, and the login that asked for it through its request topic (null: an operator). */
    record Logged(Event event, long at, String by) {
        Logged(Event event, long at) {
            this(event, at, null);
        }
    }

    @Test
    void aSnapshotPlusTheTailIsTheWholeFold() {
        int cuts = 0;
        int inFlight = 0;
        int established = 0;
        Set<Class<?>> seen = new HashSet<>();
        for (long seed = 1; seed <= 200; seed++) {
            Random rnd = new Random(-seed);
            List<Logged> log = randomLog(seed, 200 + rnd.nextInt(401));
            log.forEach(l -> seen.add(l.event().getClass()));
            int n = log.size();
            Jobs whole = fold(log, 0, n, new Jobs());
            // One cut just after a capture, so that a generation is in flight with per-rank detail.
            int afterCapture = 1 + IntStream.range(0, n).filter(i -> log.get(i).event() instanceof Event.ImageCaptured)
                    .skip(rnd.nextInt(20)).findFirst().orElse(n - 1);
            for (int k : new int[]{0, n, afterCapture, rnd.nextInt(n), rnd.nextInt(n), rnd.nextInt(n)}) {
                String where = "seed " + seed + ", cut " + k + " of " + n + ": ";
                Jobs before = fold(log, 0, k, new Jobs());
                Jobs restored = assertDoesNotThrow(() -> restore(before), where + "the snapshot does not read back");
                assertNull(diff(before, restored), where + "the decoded snapshot is not what was encoded");
                Jobs tail = assertDoesNotThrow(() -> fold(log, k, n, restored), where + "the tail does not fold");
                assertNull(diff(tail, whole), where + "snapshot plus tail is not the fold");
                cuts++;
                for (JobView j : before.all()) {
                    inFlight += j.generations().stream()
                            .anyMatch(g -> g.capturedRanks() > 0 && (g.state == OPEN || g.state == CAPTURED)) ? 1 : 0;
                    established += j.newestEstablished().isPresent() ? 1 : 0;
                }
            }
        }
        Set<Class<?>> all = new HashSet<>(Arrays.asList(Event.class.getPermittedSubclasses()));
        all.remove(Event.AgentPresent.class); // an agent's presence, never a job's event
        assertEquals(all, seen, "the logs hold every event the fold folds");
        assertTrue(inFlight > cuts / 5 && established > cuts / 2,
                cuts + " cuts, " + inFlight + " with a generation in flight, " + established + " with one established");
    }

    @Test
    void theComparisonSeesADifference() {
        List<Logged> log = randomLog(7, 400);
        Jobs a = fold(log, 0, log.size(), new Jobs());
        Jobs b = fold(log, 0, log.size(), new Jobs());
        assertNull(diff(a, b), "the same log folds to the same state");
        JobView j = b.all().stream().filter(x -> !x.generations.isEmpty()).findFirst().orElseThrow();
        GenerationView g = j.generations.firstEntry().getValue();
        g.storedBytes++;
        String d = diff(a, b);
        assertNotNull(d, "a changed generation");
        assertTrue(d.startsWith("jobs[" + j.job + "].generations[" + g.generation + "].storedBytes: "), d);
        g.storedBytes--;
        g.markerWritten = true; // not folded: a snapshot need not carry it
        assertNull(diff(a, b));

        // A repeated capture with another stall changes nothing but a private per-rank array.
        List<Logged> small = List.of(new Logged(new Event.JobStarted("j", 2, 1000, true, "file:/s", "n1"), 1),
                new Logged(new Event.CheckpointRequested("j", 0, "interval"), 2),
                new Logged(new Event.ImageCaptured("j", 0, 1, "n1", 100, 1.0), 3));
        Jobs c = fold(small, 0, 3, new Jobs());
        Jobs e = fold(small, 0, 3, new Jobs());
        e.apply(new Event.ImageCaptured("j", 0, 1, "n1", 100, 0.5), 4);
        assertEquals("jobs[j].generations[0].rankDetail.stall[1]: 1.0 != 0.5", diff(c, e));
    }

    @Test
    void malformedSnapshotsAreRefusedWithAClearError() {
        List<Logged> log = randomLog(11, 300);
        byte[] good = FoldSnapshot.encode(fold(log, 0, log.size(), new Jobs()).all());
        List<byte[]> bad = IntStream.of(0, 1, 4, 15, 16, good.length / 2, good.length - 4, good.length - 1)
                .mapToObj(len -> Arrays.copyOf(good, len)).collect(Collectors.toCollection(ArrayList::new));
        byte[] flipped = good.clone();
        flipped[good.length / 2] ^= 0x20;
        bad.add(flipped);
        // Another version, with a checksum that matches: refused for its version, not its checksum.
        byte[] later = good.clone();
        ByteBuffer.wrap(later).putInt(4, FoldSnapshot.VERSION + 1);
        CRC32 crc = new CRC32();
        crc.update(later, 0, later.length - 4);
        ByteBuffer.wrap(later).putInt(later.length - 4, (int) crc.getValue());
        bad.add(later);
        for (byte[] b : bad) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> FoldSnapshot.decode(b),
                    b.length + " of " + good.length + " bytes");
            assertNotNull(e.getMessage());
        }
        String version = assertThrows(IllegalArgumentException.class, () -> FoldSnapshot.decode(later)).getMessage();
        assertTrue(version.contains("version " + (FoldSnapshot.VERSION + 1)), version);
    }

    @Test
    void anEmptyStateRoundTrips() {
        assertEquals(List.of(), FoldSnapshot.decode(FoldSnapshot.encode(List.of())));
    }

    private static Jobs fold(List<Logged> log, int from, int to, Jobs into) {
        log.subList(from, to).forEach(l -> into.apply(l.event(), l.at(), l.by()));
        return into;
    }

    private static Jobs restore(Jobs taken) {
        Jobs out = new Jobs();
        FoldSnapshot.decode(FoldSnapshot.encode(taken.all())).forEach(out::put);
        return out;
    }

    /**
     * A log of {@code length} events of 2 or 3 jobs, each drawn from the state folded so far, as agents
     * and the coordinator would log them; one the coordinator refuses, or the fold throws on, is left out.
     */
    static List<Logged> randomLog(long seed, int length) {
        Random rnd = new Random(seed);
        List<String> names = List.of("j1", "j2", "j3").subList(0, 2 + rnd.nextInt(2));
        Jobs fold = new Jobs();
        List<Logged> log = new ArrayList<>();
        long t = 1_700_000_000_000L;
        int thrown = 0;
        while (log.size() < length) {
            String job = names.get(rnd.nextInt(names.size()));
            Event e = draw(rnd, fold.get(job).orElse(null), job, t);
            t += 1 + rnd.nextInt(3000);
            // a user's start (its job then the user's), or the user's launcher exit, now and then
            String by = e instanceof Event.JobStarted || e instanceof Event.LauncherExited
                    ? List.of("alice", "bob", "-").get(rnd.nextInt(3)) : "-";
            by = by.equals("-") ? null : by;
            if (fold.refuses(e, by).isPresent()) {
                continue;
            }
            try {
                fold.apply(e, t, by);
                log.add(new Logged(e, t, by));
            } catch (RuntimeException x) {
                thrown++; // the fold may have changed part of its state: fold again without the event
                fold = fold(log, 0, log.size(), new Jobs());
            }
        }
        assertTrue(thrown * 50 < length, "seed " + seed + ": the fold threw on " + thrown + " events");
        return log;
    }

    private static Event draw(Random rnd, JobView j, String job, long t) {
        if (j == null && rnd.nextInt(6) == 0) { // an agent's event before the start: a job of no ranks yet
            return rnd.nextBoolean() ? new Event.Heartbeat(job, "n1")
                    : new Event.ImageCaptured(job, 0, rnd.nextInt(3), "n2", 100, 0.1);
        }
        if (j == null || j.started == null || j.finished() && rnd.nextInt(4) == 0 || rnd.nextInt(300) == 0) {
            int ranks = 1 + rnd.nextInt(6);
            return rnd.nextInt(3) == 0
                    ? new Event.JobStarted(job, ranks, 60_000, rnd.nextBoolean(), "file:/s", pick(rnd, NODES))
                    : new Event.JobStarted(job, ranks, 30_000, true, "s3://b/p", "n1", placement(rnd, ranks),
                    LaunchSpec.of(List.of("sim", "--steps=" + rnd.nextInt(9))));
        }
        int n = j.ranks();
        int rank = rnd.nextInt(n);
        List<String> placed = j.placement.nodes();
        String node = placed.isEmpty() || rnd.nextInt(6) == 0 ? pick(rnd, NODES) : pick(rnd, placed);
        GenerationView g = j.latest().orElse(null);
        boolean inFlight = g != null && (g.state == OPEN || g.state == CAPTURED);
        if (!inFlight && !j.finished() && rnd.nextInt(3) == 0) {
            return new Event.CheckpointRequested(job, j.nextGeneration(), rnd.nextBoolean() ? "interval" : "request");
        }
        if (inFlight && rnd.nextInt(3) > 0) {
            return moveOn(rnd, j, g, node);
        }
        long gen = g == null ? 0 : pick(rnd, List.copyOf(j.generations.keySet()));
        String ranks = RankSet.of(IntStream.range(0, n).filter(x -> rnd.nextBoolean())).toString();
        Map<Integer, String> sources = (j.placement.byLauncher() ? RankSet.parse(ranks) : j.placement.ranksOn(node))
                .stream().boxed().collect(Collectors.toMap(x -> x, x -> pick(rnd, TIERS)));
        long usable = j.newestUsable(Long.MAX_VALUE).map(GenerationView::generation).orElse(-1L);
        long restoring = pick(rnd, List.of(j.rollbackGeneration, j.launchGeneration, -1L, gen));
        return switch (rnd.nextInt(27)) { // late and repeated events too: of any generation, any rank
            case 0 -> new Event.ImageCaptured(job, gen, rank, node, rnd.nextInt(5000), rnd.nextDouble());
            case 1 -> new Event.ImageStaged(job, gen, rank, "remote", 3000, rnd.nextInt(3000), rnd.nextDouble());
            case 2 -> new Event.CaptureFailed(job, gen, "rank " + rank + " did not answer");
            case 3 -> new Event.StagingFailed(job, gen, rank, "disk full");
            case 4 -> new Event.SnapshotEstablished(job, gen, "remote", rnd.nextDouble());
            case 5 -> new Event.PeerAddress(job, node, node + ".site:" + (7000 + rnd.nextInt(9)));
            case 6 -> new Event.PartnerCopied(job, gen, node, pick(rnd, NODES), ranks, rnd.nextInt(9000), 0.5);
            case 7, 8 -> new Event.Heartbeat(job, rnd.nextInt(4) == 0 ? Event.Heartbeat.LAUNCHER : node);
            case 9 -> new Event.PredictionMade(job, gen, 9000, n, 0.5, 8, 4, 3);
            case 10 -> new Event.StagingProgress(job, gen, node, 5000, 5000, 2000, 900);
            case 11 -> new Event.StoreHealthReported(job, node, "s3", pick(rnd, CIRCUITS), t % 97, 3, 1, 0);
            case 12 -> new Event.CacheReported(job, node, 1 << 30, rnd.nextInt(1 << 30), t % 5000, rnd.nextInt(5), 2);
            case 13 -> new Event.RankExited(job, rank, pick(rnd, List.of(0, 1, Event.RankExited.UNKNOWN_EXIT)));
            case 14, 15 -> new Event.ImagesRestored(job, restoring, node, sources);
            case 16 -> new Event.RanksJoined(job, rnd.nextInt(5) > 0 ? j.launchGeneration : gen, node, ranks);
            case 17 -> new Event.LauncherRequested(job, Math.max(1, j.launchAttempt + rnd.nextInt(2)),
                    rnd.nextBoolean() ? usable : -1, "node lost");
            case 18 -> new Event.RestartPlanned(job, usable, node, "dry-1", sources, rnd.nextBoolean() ? "" : "no");
            case 19 -> new Event.LauncherExited(job, j.launchAttempt + rnd.nextInt(2), rnd.nextInt(2));
            case 20 -> rnd.nextBoolean() ? new Event.RestoreFailed(job, restoring, node, "chunk does not verify")
                    : new Event.RestoreFailed(job, restoring, node, "store away", rnd.nextBoolean(), rnd.nextBoolean());
            case 21, 24, 25 -> new Event.RecoveryStarted(job, rnd.nextInt(4) > 0 ? usable : -1, "rank exited");
            case 22 -> new Event.HaltRequested(job, t + 60_000 + rnd.nextInt(60_000), "allocation ends");
            case 23 -> new Event.JobFinished(job, rnd.nextBoolean(), "ranks exited");
            default -> new Event.JobPlaced(job, placement(rnd, n), "node lost");
        };
    }

    /** The next step of the generation in flight, as its agents would log it: captures, then staging, then commit. */
    private static Event moveOn(Random rnd, JobView j, GenerationView g, String node) {
        BitSet missing = g.waitingFor(j.ranks());
        int r = missing.isEmpty() ? rnd.nextInt(j.ranks())
                : missing.stream().skip(rnd.nextInt(missing.cardinality())).findFirst().orElseThrow();
        long gen = g.generation;
        if (g.state == OPEN) {
            String on = j.placement.complete() && rnd.nextInt(8) > 0 ? j.placement.nodeOf(r) : node;
            long bytes = 1000 + rnd.nextInt(5000);
            return rnd.nextBoolean() ? new Event.ImageCaptured(j.job, gen, r, on, bytes, rnd.nextDouble())
                    : new Event.ImageCaptured(j.job, gen, r, on, bytes, rnd.nextDouble(), rnd.nextInt(3000));
        }
        if (missing.isEmpty()) { // < 0: found on the store, no time to establish
            return new Event.SnapshotEstablished(j.job, gen, "remote", rnd.nextInt(5) == 0 ? -1 : 9 * rnd.nextDouble());
        }
        return switch (rnd.nextInt(8)) {
            case 0 -> new Event.StagingFailed(j.job, gen, r, "store away");
            case 1, 2 -> new Event.StagingProgress(j.job, gen, node, 1000 + 1000 * rnd.nextInt(5), 5000,
                    500 * rnd.nextInt(2), 100 * rnd.nextInt(4));
            case 3 -> new Event.PredictionMade(j.job, gen, 9000, j.ranks(), 0.5, 8, 4, rnd.nextInt(5), 2000,
                    rnd.nextBoolean() ? 0 : pick(rnd, List.of(0.25, 0.5, 0.75)));
            case 4 -> new Event.ImageStaged(j.job, gen, r, "remote", 3000, rnd.nextInt(3000), rnd.nextDouble(),
                    String.format("%064x", r));
            default -> new Event.ImageStaged(j.job, gen, r, "remote", 3000, rnd.nextInt(3000), rnd.nextDouble());
        };
    }

    /** A placement of {@code ranks} ranks of every kind: block, cyclic, map, and the site launcher's (none joined). */
    private static String placement(Random rnd, int ranks) {
        List<String> nodes = new ArrayList<>(NODES);
        Collections.shuffle(nodes, rnd);
        List<String> some = nodes.subList(0, 1 + rnd.nextInt(Math.min(ranks, 3)));
        return switch (rnd.nextInt(4)) {
            case 0 -> "block:" + String.join(",", some);
            case 1 -> "cyclic:" + String.join(",", some);
            case 2 -> "map:" + IntStream.range(0, ranks).mapToObj(r -> r + ":" + some.get(r % some.size()))
                    .collect(Collectors.joining(","));
            default -> "launcher:";
        };
    }

    private static <T> T pick(Random rnd, List<T> from) {
        return from.get(rnd.nextInt(from.size()));
    }

    /** The first difference of two folded states, as {@code jobs[j1].generations[3].stagedCount: 4 != 5}; or null. */
    static String diff(Jobs a, Jobs b) {
        return diff(byName(a), byName(b), "jobs", new IdentityHashMap<>());
    }

    private static Map<String, JobView> byName(Jobs jobs) {
        return jobs.all().stream().collect(Collectors.toMap(JobView::job, j -> j, (x, y) -> x, TreeMap::new));
    }

    private static String diff(Object a, Object b, String path, Map<Object, Object> seen) {
        if (a == b) {
            return null;
        }
        if (a == null || b == null || a.getClass() != b.getClass()) {
            return path + ": " + typed(a) + " != " + typed(b);
        }
        if (a instanceof Placement p && b instanceof Placement q) { // its text, and the ranks it was parsed for
            return p.toString().equals(q.toString()) && p.ranks() == q.ranks() ? null
                    : path + ": " + p + " of " + p.ranks() + " ranks != " + q + " of " + q.ranks() + " ranks";
        }
        if (a instanceof Event || a instanceof String || a instanceof Number || a instanceof Boolean
                || a instanceof Enum<?> || a instanceof BitSet // Double.equals: NaN is NaN, as Double.compare
                || a instanceof Set<?> && !(a instanceof SortedSet<?>)) { // a hash set has no order to compare in
            return a.equals(b) ? null : path + ": " + a + " != " + b;
        }
        if (a instanceof Map<?, ?> m && b instanceof Map<?, ?> o) {
            return !m.keySet().equals(o.keySet()) ? path + ".keys: " + m.keySet() + " != " + o.keySet()
                    : first(m.keySet().stream().map(k -> diff(m.get(k), o.get(k), path + "[" + k + "]", seen)));
        }
        if (a instanceof Collection<?> || a.getClass().isArray()) { // lists, deques, sorted sets, arrays: in order
            List<?> x = elements(a);
            List<?> y = elements(b);
            return x.size() != y.size() ? path + ".size: " + x.size() + " != " + y.size() : first(IntStream
                    .range(0, x.size()).mapToObj(i -> diff(x.get(i), y.get(i), path + "[" + i + "]", seen)));
        }
        if (!a.getClass().getName().startsWith("io.ferry.")) {
            throw new AssertionError("no comparison for a " + a.getClass() + " at " + path);
        }
        Object wasB = seen.put(a, b);
        Object wasA = seen.put(b, a);
        if (wasB == b && wasA == a) { // the job's node names, shared by its generations: compared once
            return null;
        } else if (wasB != null || wasA != null) { // mutable state shared in one but not the other
            return path + ": held elsewhere too in the " + (wasB != null ? "first" : "second") + " state only";
        }
        return first(FIELDS.computeIfAbsent(a.getClass(), FoldSnapshotTest::compared).stream()
                .map(f -> diff(read(f, a), read(f, b), path + "." + f.getName(), seen)));
    }

    private static String first(Stream<String> differences) {
        return differences.filter(Objects::nonNull).findFirst().orElse(null); // lazy: stops at the first
    }

    private static String typed(Object o) {
        return o == null ? "null" : o + " (" + o.getClass().getSimpleName() + ")";
    }

    private static List<?> elements(Object o) {
        return o instanceof Collection<?> c ? new ArrayList<>(c)
                : IntStream.range(0, Array.getLength(o)).mapToObj(i -> Array.get(o, i)).toList();
    }

    private static Object read(Field f, Object o) {
        try {
            return f.get(o);
        } catch (IllegalAccessException e) {
            throw new AssertionError(f.toString(), e);
        }
    }

    /** The fields of {@code type} a snapshot carries: all but static ones and the coordinator's own. */
    private static List<Field> compared(Class<?> type) {
        List<Field> out = new ArrayList<>();
        for (Class<?> c = type; c != Object.class; c = c.getSuperclass()) {
            for (Field f : c.getDeclaredFields()) {
                if (!Modifier.isStatic(f.getModifiers()) && !f.isSynthetic()
                        && !NOT_FOLDED.contains(c.getSimpleName() + "." + f.getName())) {
                    f.setAccessible(true);
                    out.add(f);
                }
            }
        }
        return out;
    }
}
