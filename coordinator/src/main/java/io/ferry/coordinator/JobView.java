package io.ferry.coordinator;

import io.ferry.model.Event;
import io.ferry.model.Placement;
import io.ferry.model.RankSet;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/** What the log says about one job. Mutable, owned by {@link Jobs}; not thread-safe. */
public final class JobView {
    final String job;
    Event.JobStarted started;
    /** The login that submitted it through its request topic ({@link JobOwners}); null: an operator's job. */
    String owner;
    final TreeMap<Long, GenerationView> generations = new TreeMap<>();
    /** The names of the nodes its generations' ranks were captured on, each held once. */
    final NodeNames nodeNames = new NodeNames();
    /** Which node runs which rank: from the start event, or the latest {@link Event.JobPlaced}. */
    Placement placement;
    final Map<Integer, Integer> exits = new HashMap<>();
    /** The newest rollbacks and resuming launches, and where each rank's image came from. */
    final RestartHistory restarts = new RestartHistory();
    int recoveries;
    /**
     * Rollbacks in a row without progress: since the job's newest established generation last
     * grew, or since the job was (re)started. Folded from the log, so a coordinator that takes
     * over counts on; {@link #lastRecoveryMillis} is the log time of the newest.
     */
    int rollbacksWithoutProgress;
    long progressMark = Long.MIN_VALUE;
    long lastRecoveryMillis;
    /** The generation the current rollback restores (-1: from the beginning); meaningful while {@link #rollingBack}. */
    long rollbackGeneration = -1;
    boolean rollingBack;
    /** The coordinator's own decision state, not folded: a rollback decided, waiting for in-flight staging. */
    String pendingRollback;
    /**
     * Folded: the current launcher attempt's exit, until a rollback, a new attempt or a new run
     * answers it. A coordinator that crashed before it acted on it finds it here after its replay.
     */
    Event.LauncherExited launcherExit;
    /**
     * Folded: a restore of the generation being rolled back to that failed, until the next rollback
     * (or a new run) answers it; found here after a replay, as {@link #launcherExit}.
     */
    Event.RestoreFailed restoreFailed;
    /** When this coordinator last began to judge the job afresh (its replay ended, the log came back). */
    long judgedSinceMillis;
    long pendingSinceMillis;
    /** The {@link #pendingSinceMillis} whose backoff wait was said on stderr already. */
    long pendingNoticedFor = -1;
    /**
     * Whether the current run's start was decided: the coordinator logged where it launches the ranks ({@link
     * Event.JobPlaced}), a launcher attempt, a rollback, or a checkpoint. A run whose coordinator stopped before that
     * (while the store was listed, or while the start waited for its DMTCP lead) is started by the one that takes
     * the job over ({@link HandOver}), not left to the heartbeat timeout.
     */
    boolean launched;
    /** Whether the current run resumes one that did not succeed (failed, or halted): its start rolls back. */
    boolean startResumes;
    /** Log time the start was deferred at until rank 0's agent is heard ({@link Recovery#onStarted}), or -1. */
    long startDeferredSinceMillis = -1;
    /** Whether the deferred start resumes a run that failed. */
    boolean startDeferredResumes;
    /**
     * Folded: log time of the current run's start placement ({@link Event.JobPlaced#START}), 0 where there is none or
     * a rollback or another placement followed it; and the nodes that answered that start (their ranks launched, or
     * their launch failed). A start placed by an earlier coordinator that a node never answered is sent to that
     * node again ({@link Overdue#unansweredStart}).
     */
    long startPlacedAtMillis;
    final Set<String> startAnswered = new TreeSet<>();
    /** The coordinator's own: whether it sent the start's launches again ({@link Overdue#unansweredStart}). */
    boolean startResent;
    /**
     * The coordinator's own: when its replay of the job ended (it started, or took the job over), 0 for a job it
     * only saw live. A start placed before then was placed by an earlier coordinator; one placed after, by this one,
     * whose launches went out (a log outage after it, which gives every node a fresh hearing, changes nothing).
     */
    long replayedAtMillis;
    /** Nodes that reported {@link Event.ImagesRestored} for the current rollback. */
    final Set<String> restoredNodes = new TreeSet<>();
    /** A launcher's ranks adopted by their nodes' agents in its current attempt (restored, or from the beginning). */
    final BitSet restoredRanks = new BitSet();
    /** The site launcher's current attempt (0: none yet), the generation its ranks restart from, and why. */
    int launchAttempt;
    long launchGeneration = -1;
    String launchCause = "";
    long lastRequestMillis;
    /** Log time of each node's newest heartbeat (or of the job's start or placement, before any). */
    final Map<String, Long> heartbeats = new TreeMap<>();
    /**
     * The coordinator's own, not folded: no node of the placement can be silent before this
     * time (its oldest heartbeat plus the timeout, at the last scan); 0 after any change of
     * placement or of the nodes' heartbeats other than a newer one.
     */
    long heartbeatsFreshUntil;
    /**
     * Log time of the newest heartbeat of the {@code ferry run --launch} that holds the job's
     * launcher ({@link Event.Heartbeat#LAUNCHER}); 0 before its first (older versions send none,
     * and are not watched).
     */
    long launcherSeenMillis;

    /** The deadline of a halt asked of the job's current run (epoch milliseconds), if one was. */
    public Optional<Long> haltDeadline() {
        return haltDeadlineMillis == 0 ? Optional.empty() : Optional.of(haltDeadlineMillis);
    }
    /** Nodes that sent a heartbeat of the job since it was (re)placed: they run it. */
    final Set<String> answered = new TreeSet<>();
    /** Why a node could not launch the job (a start that failed there), or empty. */
    String launchFailure = "";
    long startedAtMillis;
    long finishedAtMillis;
    /**
     * A halt asked of the job's current run: stop once a generation requested after it is established, by this time; 0:
     * none.
     */
    long haltDeadlineMillis;
    /** When the halt was asked (log time): generations requested from then on are the final checkpoint. */
    long haltRequestedAtMillis;
    /** The run ended because it was halted: not done, the same `ferry run` resumes it. */
    boolean halted;
    /** When the coordinator first found a node silent and acted on it, or 0. */
    long silentSinceMillis;
    /** The latest store health each node reported. */
    final Map<String, Event.StoreHealthReported> storeHealth = new TreeMap<>();
    /**
     * Where each node's agent serves its cache to the others ({@link Event.PeerAddress}), and when it last said so or
     * sent a heartbeat.
     */
    final Map<String, String> peers = new TreeMap<>();
    final Map<String, Long> peerSeenMillis = new HashMap<>();
    /** The latest cache report of each node. */
    final Map<String, Event.CacheReported> caches = new TreeMap<>();
    Boolean success;
    String finishDetail = "";

    JobView(String job) {
        this.job = job;
    }

    public String job() {
        return job;
    }

    public int ranks() {
        return started == null ? 0 : started.ranks();
    }

    public Optional<Event.JobStarted> settings() {
        return Optional.ofNullable(started);
    }

    public Collection<GenerationView> generations() {
        return generations.values();
    }

    public boolean finished() {
        return success != null;
    }

    public Optional<Boolean> success() {
        return Optional.ofNullable(success);
    }

    /** The latest remote-store health per node (empty for stores without a resilience layer). */
    public Collection<Event.StoreHealthReported> storeHealth() {
        return storeHealth.values();
    }

    /** The latest cache report per node: how full each node's cache is. */
    public Collection<Event.CacheReported> caches() {
        return caches.values();
    }

    /** Log time (ms) of the newest checkpoint request, or of the job's start before any. */
    public long lastRequestMillis() {
        return lastRequestMillis;
    }

    /** Seconds from the job's first start to its end, or to {@code nowMillis} while it runs. */
    public double runSeconds(long nowMillis) {
        if (startedAtMillis == 0) {
            return 0;
        }
        return ((success != null && finishedAtMillis > 0 ? finishedAtMillis : nowMillis) - startedAtMillis) / 1000.0;
    }

    /**
     * Fails the generations after {@code generation} still in flight (OPEN or CAPTURED): a
     * rollback to it, or a new run of the job, left their timeline, so none is ever established
     * nor restarted from. Idempotent.
     */
    void abandonAfter(long generation, String why) {
        for (GenerationView g : generations.tailMap(generation, false).values()) {
            if (g.state == GenerationView.State.OPEN || g.state == GenerationView.State.CAPTURED) {
                g.state = GenerationView.State.FAILED;
                g.failure = why;
                g.compact();
            }
        }
    }

    /** The job's newest restarts, oldest first: which tier each rank's image came from. */
    public List<RestartHistory.Restart> restarts() {
        return restarts.all();
    }

    public int recoveries() {
        return recoveries;
    }

    /** The newest generation established on the remote store. */
    public Optional<GenerationView> newestEstablished() {
        return generations.descendingMap().values().stream()
                .filter(g -> g.state == GenerationView.State.ESTABLISHED).findFirst();
    }

    /**
     * What a rollback uses: the newest established generation below {@code belowExclusive}
     * that no node failed to restore (a generation once found unusable is not chosen again).
     */
    public Optional<GenerationView> newestUsable(long belowExclusive) {
        // A generation of another rank count (the job resubmitted wider or narrower) is not bad data: it
        // only cannot be restored by this run, so it is passed over, never set aside.
        return generations.headMap(belowExclusive, false).descendingMap().values().stream()
                .filter(g -> g.state == GenerationView.State.ESTABLISHED && g.restoreFailure.isEmpty()
                        && (g.ranks == 0 || g.ranks == ranks()))
                .findFirst();
    }

    /** Which node runs which rank (empty before the job started). */
    public Optional<Placement> placement() {
        return Optional.ofNullable(placement);
    }

    /** Whether a rollback was started and not every node has restored its ranks yet. */
    public boolean rollingBack() {
        return rollingBack;
    }

    /**
     * Whether a rank of this life of the job finished (exited 0): the job is winding down, and no
     * snapshot can be consistent any more, since that rank cannot be asked for its image.
     */
    public boolean aRankFinished() {
        return exits.containsValue(0);
    }

    /** Whether every rank runs: always for ranks Ferry launches; a launcher's once every rank was adopted. */
    public boolean allRanksRunning() {
        return placement != null && (!placement.byLauncher() || restoredRanks.cardinality() >= ranks());
    }

    /**
     * Whether the current run's start was placed by an earlier coordinator (before this one's replay of the job ended)
     * and some node has not answered it yet, nor been sent it again ({@link Overdue#unansweredStart}): nothing of the
     * job may run there, and a capture sent now would reach it before its launch.
     */
    boolean startAwaitsAnswers() {
        return startPlacedAtMillis > 0 && !startResent && startPlacedAtMillis < replayedAtMillis
                && !placement.nodes().stream().allMatch(n -> startAnswered.contains(n) || answered.contains(n));
    }

    /** The site launcher's current attempt: 0 for a job whose ranks Ferry launches itself. */
    public int launchAttempt() {
        return launchAttempt;
    }

    /** Whether {@code node} has sent a heartbeat of this job since the job was started or placed there. */
    public boolean answered(String node) {
        return answered.contains(node);
    }

    /** Why a node could not launch the job since it started, if one could not. */
    public Optional<String> launchFailure() {
        return launchFailure.isEmpty() ? Optional.empty() : Optional.of(launchFailure);
    }

    /** Log time of {@code node}'s newest heartbeat, or of the job's start before any. */
    public long lastHeartbeatMillis(String node) {
        return heartbeats.getOrDefault(node, startedAtMillis);
    }

    /**
     * Every node of the job (and its launcher's `ferry run`) counts as heard at {@code nowMillis}:
     * after a replay, whose heartbeats carry their senders' clocks, not when they arrived, each node
     * gets a whole heartbeat timeout on the coordinator's own clock to be heard before it is judged.
     */
    void heardAllAt(long nowMillis) {
        judgedSinceMillis = Math.max(judgedSinceMillis, nowMillis);
        heartbeats.replaceAll((node, t) -> Math.max(t, nowMillis));
        if (launcherSeenMillis > 0) {
            launcherSeenMillis = Math.max(launcherSeenMillis, nowMillis);
        }
        heartbeatsFreshUntil = 0;
    }

    /** A node that holds up an in-flight generation: its ranks not yet captured ("capture") or staged ("staging"). */
    public record Straggler(String node, RankSet ranks, String phase) {}

    /**
     * Who the newest in-flight generation waits for, per node, most-missing first: the nodes to
     * look at when a snapshot takes long. Empty when nothing is in flight.
     */
    public List<Straggler> stragglers() {
        List<Straggler> out = new ArrayList<>();
        GenerationView g = latest().orElse(null);
        if (g == null || placement == null
                || (g.state != GenerationView.State.OPEN && g.state != GenerationView.State.CAPTURED)) {
            return out;
        }
        BitSet missing = g.waitingFor(ranks());
        if (missing.isEmpty()) {
            return out;
        }
        String phase = g.state == GenerationView.State.OPEN ? "capture" : "staging";
        for (String node : placement.nodes()) {
            BitSet here = new BitSet();
            placement.ranksOn(node).stream().filter(missing::get).forEach(here::set);
            if (!here.isEmpty()) {
                out.add(new Straggler(node, RankSet.of(here.stream()), phase));
            }
        }
        out.sort(Comparator.comparingInt((Straggler s) -> -s.ranks().size()).thenComparing(Straggler::node));
        return out;
    }

    /** One line naming the stragglers (at most {@code shown} nodes), or empty. */
    public Optional<String> stragglersLine(int shown) {
        List<Straggler> s = stragglers();
        if (s.isEmpty()) {
            return Optional.empty();
        }
        StringBuilder b = new StringBuilder("generation " + latest().orElseThrow().generation() + " waits for ");
        for (int i = 0; i < Math.min(shown, s.size()); i++) {
            b.append(i == 0 ? "" : ", ").append(s.get(i).node()).append(" (ranks ").append(s.get(i).ranks())
                    .append(" to ").append(s.get(i).phase().equals("capture") ? "capture" : "stage").append(')');
        }
        if (s.size() > shown) {
            b.append(" and ").append(s.size() - shown).append(" more nodes");
        }
        return Optional.of(b.toString());
    }

    /** The newest generation requested, if any. */
    public Optional<GenerationView> latest() {
        return generations.isEmpty() ? Optional.empty() : Optional.of(generations.lastEntry().getValue());
    }

    /** Whether a capture is under way (requested, not yet captured by every rank nor failed). */
    public boolean capturing() {
        return latest().map(g -> g.state == GenerationView.State.OPEN).orElse(false);
    }

    public long nextGeneration() {
        return generations.isEmpty() ? 0 : generations.lastKey() + 1;
    }
}
