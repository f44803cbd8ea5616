package io.ferry.coordinator;

import io.ferry.eventlog.EventLines;
import io.ferry.eventlog.KafkaLog;
import io.ferry.eventlog.RequestTopics;
import io.ferry.model.DaemonThreads;
import io.ferry.model.Event;
import io.ferry.model.EventCodec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.FencedInstanceIdException;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.WakeupException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import java.io.Closeable;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The coordinator: one thread folds the events topic into {@link Jobs} from its beginning,
 * reads the heartbeats topic from its end ({@link Heartbeats}), then, once caught up ("live"),
 * reacts to new events: establishes snapshots whose ranks are
 * all staged (commit marker last), requests checkpoints on each job's interval and on
 * request (a capture command to every node of the job), launches jobs on their nodes and
 * rolls a job back when a rank dies or a node falls silent ({@link Recovery}), and has
 * {@link Commits} write the commit markers in each job's store; what it decides at each tick,
 * from the state it folded, is {@link Decisions}'. It serves any number
 * of jobs. A restarted coordinator replays the log, reconciles, and carries on. Malformed
 * events are counted and parked on the dead-letter topic; a failure handling one event,
 * command or tick is logged and counted, never the end of the loop. Thread-safe: queries
 * run under its lock.
 */
public final class Coordinator implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(Coordinator.class);
    private final AgentEpochs epochs = new AgentEpochs();
    private final KafkaLog log;
    private final Commits commits;
    private final Clock clock;
    private final Jobs jobs = new Jobs();
    private final Recovery recovery;
    /** What users ask of it on the commands topic (checkpoint, halt, restart, chaos). */
    private final Orders orders;
    /** Jobs whose state record is to be published after the current batch of events. */
    private final Set<String> changed = new LinkedHashSet<>();
    private final AtomicLong malformed = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private final Guard guard = new Guard(failures);
    private final CountDownLatch live = new CountDownLatch(1);
    private final Thread thread;
    private volatile boolean running = true;
    private volatile Consumer<Event> listener = e -> { };
    /** The meters fed with live events, or null where this process keeps none. */
    private volatile CoordinatorMeters meters;
    /** The coordinators sharing this log's jobs; see {@link #inGroup}. */
    public static final String DEFAULT_GROUP = "ferry-coordinators";
    /** How long a coordinator may be silent before the others of its group take its jobs over. */
    public static final Duration DEFAULT_TAKEOVER = Duration.ofSeconds(10);
    private String group = DEFAULT_GROUP;
    private Duration takeoverAfter = DEFAULT_TAKEOVER;
    /** This coordinator's static identity in its group ({@link KafkaLog#groupReader}), or empty. */
    private String instance = "";
    /** Set when another live coordinator took this one's identity: it decides nothing more. */
    private volatile boolean fenced;
    private final CountDownLatch ended = new CountDownLatch(1);
    private final Ownership ownership;
    private final HandOver handOver;
    private Lease lease;
    private final LogReach reach;
    private final Overdue overdue;
    private final Reactions reactions;
    /** What the coordinator decides at each tick. */
    private final Decisions decisions;
    private final Quarantine quarantine = new Quarantine();
    private final SnapshotTopic snapshotTopic;
    /** Relays what logins that are not operators ask through their request topics (started with the loop). */
    private RequestRelay relay;
    private SnapshotKeeper snapshots;
    private final String who = "pid " + ProcessHandle.current().pid();

    /** How long a node may stay silent before its ranks are moved (or its job rolled back, or failed). */
    public static final Duration DEFAULT_HEARTBEAT_TIMEOUT = Duration.ofSeconds(30);
    private final long heartbeatTimeoutMillis;

    public Coordinator(KafkaLog log, Clock clock) {
        this(log, clock, DEFAULT_HEARTBEAT_TIMEOUT);
    }

    public Coordinator(KafkaLog log, Clock clock, Duration heartbeatTimeout) {
        this(log, clock, heartbeatTimeout, Map.of());
    }

    /**
     * @param secrets store credentials known to this process (they never travel in the log),
     *                added to every job's store settings; empty: the stores' own chains
     */
    public Coordinator(KafkaLog log, Clock clock, Duration heartbeatTimeout, Map<String, String> secrets) {
        this.commits = new Commits(log, this, secrets);
        this.heartbeatTimeoutMillis = heartbeatTimeout.toMillis();
        this.log = log;
        log.stampCommands(epochs::of); // every command to a node names the newest agent heard under its name
        this.clock = clock;
        this.recovery = new Recovery(log, this, clock, epochs);
        this.ownership = new Ownership(who, this::givenUp);
        this.orders = new Orders(log, jobs, recovery, ownership, clock, malformed);
        this.handOver = new HandOver(this, jobs, clock, commits, orders, recovery, changed);
        this.reach = new LogReach(log, clock::millis);
        this.overdue = new Overdue(log, this);
        this.reactions = new Reactions(log, recovery, commits, clock);
        this.decisions = new Decisions(log, this, clock, jobs, ownership, quarantine, commits, recovery, overdue,
                orders, heartbeatTimeoutMillis, () -> lease.held());
        this.thread = DaemonThreads.unstarted("ferry-coordinator", this::run);
        this.snapshotTopic = new SnapshotTopic(log, who);
        configured(CoordinatorSettings.DEFAULT);
    }

    /**
     * Snapshots its folded state every {@code events} events folded per events partition (before
     * {@link #start()}; 0: never, though a start still loads the snapshots others wrote): a restart
     * then replays at most about that many events per partition, not the jobs' whole history.
     */
    public Coordinator snapshotEvery(long events) {
        this.snapshots = new SnapshotKeeper(snapshotTopic, events);
        ownership.startFrom(snapshots, j -> {
            synchronized (this) {
                jobs.put(j);
            }
        });
        return this;
    }

    /** Takes {@code settings} (before {@link #start()}): its snapshot interval. */
    public Coordinator configured(CoordinatorSettings settings) {
        return snapshotEvery(settings.snapshotEvery());
    }

    /** Called on the coordinator thread for every live event, after it is applied (for progress output). */
    public Coordinator onEvent(Consumer<Event> l) {
        this.listener = l;
        return this;
    }

    /** Feeds {@code m} with every live event once it is folded (before {@link #start()}). */
    public Coordinator metered(CoordinatorMeters m) {
        this.meters = m;
        return this;
    }

    /**
     * Joins coordinator group {@code group} (before {@link #start()}): coordinators of one group
     * share the jobs by partition of the events topic, and one silent for {@code takeoverAfter}
     * has its jobs taken over by the others, each replayed from the log first; a snapshot it had
     * in flight is established by its new owner once its ranks are staged.
     *
     * <p>A non-empty {@code instance} names this coordinator for good (the same on every start of
     * the same service, e.g. one per home): started again after a crash, it takes its old place
     * in the group and its jobs at once, not after {@code takeoverAfter}. A second coordinator
     * started under the same name fences this one, which then stops ({@link #fenced()}).
     */
    public Coordinator inGroup(String group, Duration takeoverAfter, String instance) {
        this.group = Objects.requireNonNull(group, "group");
        this.takeoverAfter = takeoverAfter;
        this.instance = Objects.requireNonNull(instance, "instance");
        return this;
    }

    /** Whether this coordinator stopped because another took its identity in the group. */
    public boolean fenced() {
        return fenced;
    }

    /** Waits until this coordinator's loop has ended (closed, or {@link #fenced()}); whether it did. */
    public boolean awaitEnd(Duration timeout) throws InterruptedException {
        return ended.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * A heartbeat or a node's staging progress read from the heartbeats topic, counted from {@code
     * atMillis} ({@link Heartbeats#countsFrom}): folded into its job when this coordinator holds that
     * job (another's, or one not started yet, is passed over). A heartbeat is not a change of the job's state record:
     * liveness is judged live, never read back. Progress is reacted to as a live event (the
     * generation's forecast again), once the job's replay is over. An agent's presence gives its
     * node's newest epoch, which commands to that node carry from then on ({@link AgentEpochs}).
     */
    private void heard(Event e, String by, long atMillis) {
        if (e instanceof Event.AgentPresent p) {
            epochs.heard(p);
            return;
        }
        JobView j;
        synchronized (this) {
            JobView held = jobs.get(e.job()).orElse(null);
            if (held == null || JobOwners.refuses(held, e.job(), false, by).isPresent()) {
                return; // not held here, or a login's heartbeat of a job not its own
            }
            j = jobs.apply(e, atMillis);
        }
        if (e instanceof Event.StagingProgress && !ownership.replaying(e.job())) {
            listener.accept(e);
            reactions.to(e, j, false);
            changed.add(e.job());
        }
    }

    /** Jobs of partitions given up to another coordinator ({@link Ownership}'s call): forgotten here. */
    private void givenUp(Set<String> gone) {
        handOver.forget(gone);
    }

    /**
     * Starts the coordinator's thread. Refused ({@link IllegalStateException}) where the events topic
     * lost events no snapshot covers, or compacts them ({@link EventsCoverage}): an error, not a
     * warning, as the first deletion comes days after such a start, when nobody reads warnings.
     */
    public Coordinator start() {
        EventsCoverage.require(log, snapshotTopic, snapshots.every(), who);
        lease = Lease.of(takeoverAfter, Duration.ofMillis(heartbeatTimeoutMillis));
        reach.start();
        relay = RequestRelay.start(log, group);
        thread.start();
        return this;
    }

    /** Waits until the log has been replayed. */
    public boolean awaitLive(Duration timeout) throws InterruptedException {
        return live.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Runs {@code query} against the current state, consistently. */
    public synchronized <T> T query(Function<Jobs, T> query) {
        return query.apply(jobs);
    }

    /** Records of the events topic folded since its start, replayed or live: what a start from a snapshot spares. */
    public long foldedEvents() {
        return snapshots.folded();
    }

    public long malformedEvents() {
        return malformed.get();
    }

    /** Events, commands and ticks whose handling failed (each was logged and the loop went on). */
    public long failures() {
        return failures.get();
    }

    private void run() {
        KafkaConsumer<byte[], byte[]> events = null;
        // A coordinator with an identity reads its commands from where it left off: a halt, a checkpoint or a
        // restart asked while it was down or restarting is read once it is back, not lost.
        try (KafkaConsumer<byte[], byte[]> commands = instance.isEmpty() ? log.reader(KafkaLog.COMMANDS, false)
                : log.resumableReader(KafkaLog.COMMANDS, instance + "-commands");
             Heartbeats heartbeats = new Heartbeats(log, malformed, clock, heartbeatTimeoutMillis)) {
            events = log.groupReader(KafkaLog.EVENTS, group, instance, ownership, takeoverAfter);
            ownership.attach(events);
            while (running) {
                try {
                    long polling = lease.polling(live.getCount() == 0);
                    var batch = events.poll(Duration.ofMillis(50));
                    if (live.getCount() == 0) {
                        lease.polled(polling);
                    } else {
                        lease.polledWhileStarting(polling);
                    }
                    if (!lease.handle(events, batch, live.getCount() == 0,
                            r -> guard.run(r, "event", () -> onEvent(r)))) {
                        continue; // stalled: poll again before anything else
                    }
                    guard.run("heartbeats", () -> heartbeats.drain(this::heard)); // before deciding on them below
                    Set<String> replayed = ownership.advance();
                    if (!replayed.isEmpty()) {
                        handOver.replayed(replayed);
                    }
                    if (live.getCount() > 0 && ownership.caughtUp()) {
                        live.countDown();
                    }
                    guard.run("snapshot", () -> snapshots.maybeWrite(ownership, jobs, quarantine));
                    if (live.getCount() == 0 && lease.held()) {
                        // While events stream in, take only the commands already fetched: waiting here would cap the
                        // fold rate.
                        var asked = commands.poll(batch.isEmpty() ? Duration.ofMillis(20) : Duration.ZERO);
                        retryDeferred();
                        if (lease.handle(commands, asked, true, r -> guard.run(r, "command", () -> orders.handle(r)))
                                && reach.reachable()) { // a log that does not answer is not every node gone silent
                            if (reach.cameBack()) {
                                handOver.heardAfresh(Set.copyOf(jobs.all().stream().map(j -> j.job).toList()));
                            }
                            guard.run("tick", decisions::tick);
                        }
                        if (!asked.isEmpty() && !instance.isEmpty()) {
                            commands.commitAsync(); // handled (or deferred in memory): a restart resumes after them
                        }
                        guard.run("state", this::publishState);
                    }
                } catch (KafkaException e) {
                    if (e instanceof InterruptException
                            || e instanceof WakeupException
                            || e instanceof FencedInstanceIdException) {
                        throw e;
                    }
                    failures.incrementAndGet(); // the broker is away: poll again, the log keeps our place
                    LOG.warn("reading the log failed, retrying: {}", e.getMessage()); // expected: no stack trace
                    DaemonThreads.pause(1000);
                }
            }
        } catch (InterruptException | WakeupException e) {
            // closing
        } catch (FencedInstanceIdException e) {
            fenced = true;
            running = false;
            handOver.forget(Set.copyOf(jobs.all().stream().map(j -> j.job).toList()));
            LOG.error("another coordinator started as {} in group {}: this one stops deciding ({})", instance, group,
                    e.getMessage());
        } finally {
            reach.close();
            if (events != null) {
                if (fenced) {
                    events.close(); // its place is another's now: leaving would only be refused
                } else {
                    KafkaLog.leaveGroup(events); // the group's others take its jobs at once
                }
            }
            commits.close();
            relay.close();
            snapshots.close(); // a snapshot being written is finished (bounded), so a stop on purpose leaves it whole
            ended.countDown();
        }
    }

    /** Times the coordinator noticed it had been stalled ({@link Lease}) and held its decisions back. */
    public long stalls() {
        return lease.stalls();
    }

    private void onEvent(ConsumerRecord<byte[], byte[]> r) {
        Event e;
        try {
            e = EventCodec.decode(r.value());
        } catch (IllegalArgumentException bad) {
            park(r, ownership.live(r, ""), "malformed event", EventLines.oneLine(bad.getMessage()));
            return;
        }
        boolean isLive = ownership.live(r, e.job());
        String by = RequestTopics.by(r);
        Optional<String> refused;
        synchronized (this) {
            refused = jobs.refuses(e, by);
        }
        if (refused.isPresent()) {
            park(r, isLive, "event that its job cannot hold", refused.get());
            return;
        }
        if (!quarantine.run(e.job(), () -> "event at offset " + r.offset(), () -> foldAndReact(e, r, isLive, by))) {
            failures.incrementAndGet();
        }
    }

    /** Counts an event that cannot be folded and, live, parks it on the dead-letter topic (a replay finds it again). */
    private void park(ConsumerRecord<byte[], byte[]> r, boolean isLive, String what, String why) {
        malformed.incrementAndGet();
        if (isLive) {
            LOG.warn("parked {} at offset {}: {}", what, r.offset(), why);
            log.sendRaw(KafkaLog.DEAD_LETTER, r.partition() + "-" + r.offset(), r.value());
        }
    }

    /** Folds one decoded event into its job and, when it is live, reacts to it. */
    private void foldAndReact(Event e, ConsumerRecord<byte[], byte[]> r, boolean isLive, String by) {
        JobView j;
        boolean resumedAfterFailure;
        synchronized (this) {
            // Live, an event counts from when it arrives, on this coordinator's clock: never by its
            // sender's clock (a node's skewed clock would make it look silent, or alive for ever). A
            // replayed one has only its record's time; HandOver.heardAfresh re-arms liveness after a replay.
            // Forecasts measure a capture by its record's time, as they do the marks after it, where that lies
            // within a heartbeat timeout of this clock, as staging reports count (Heartbeats.logged).
            long now = clock.millis();
            long logged = isLive ? Heartbeats.logged(r.timestamp(), now, heartbeatTimeoutMillis) : r.timestamp();
            j = jobs.apply(e, isLive ? now : r.timestamp(), logged, by);
            resumedAfterFailure = e instanceof Event.JobStarted && j.startResumes; // judged by the fold
        }
        if (isLive) {
            listener.accept(e);
            CoordinatorMeters m = meters;
            if (m != null) {
                m.observe(e, j);
            }
            reactions.to(e, j, resumedAfterFailure);
            changed.add(e.job());
        }
    }

    /**
     * The compacted state topic: one record per job changed since the last one, once per batch
     * of events (not per event: the record grows with the job's generations), not waited for.
     */
    private void publishState() {
        for (String job : changed) {
            jobs.get(job).ifPresent(j -> log.publish(KafkaLog.STATE, job, StateJson.of(j)));
        }
        changed.clear();
    }

    private void retryDeferred() {
        // one whose job is still being replayed is deferred again
        orders.takeDeferred().forEach(r -> guard.run(r, "command", () -> orders.handle(r)));
    }

    @Override
    public void close() {
        ownership.closing();
        running = false;
        try {
            thread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
