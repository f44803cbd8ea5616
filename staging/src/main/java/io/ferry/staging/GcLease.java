package io.ferry.staging;

import io.ferry.model.DaemonThreads;
import io.ferry.stores.ObjectNotFoundException;
import io.ferry.stores.Store;
import io.ferry.stores.TransientStoreException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The lease that keeps two {@code ferry store gc} runs on one store from overlapping: an object
 * under {@code ferry/v1/gc/lease/} saying who holds it and until when, renewed while the run goes
 * on and deleted at its end. The {@link Store} SPI has no create-if-absent, so the lease is taken
 * with what every store has (whole-object puts, read-after-write listings), as restic takes its
 * exclusive lock: each contender puts its own object (state {@code claim}), lists the prefix, and
 * holds the lease only if it saw no other live object; it then rewrites its object as
 * {@code held}. Of two contenders the one whose listing came later sees the other's claim, so at
 * most one holds. A contender that sees only claims steps back (deletes its own), waits a random
 * moment and tries again; one that sees a {@code held} lease refuses with {@link HeldException},
 * naming the holder and when its lease expires.
 *
 * <p>A lease past its expiry (its gc crashed, or its host went away) is taken over: deleted, and
 * the lease taken as above. So is one of a process on this host that no longer runs (a gc killed
 * here need not be waited out). Limits: expiry times are written by the holder's clock and judged
 * by the contender's, so hosts' clocks must agree to well within the lease's length (minutes); a
 * holder that cannot renew (store unreachable, process stopped) past its expiry loses the lease
 * and stops at its next {@link #check()}, but what it was doing at that moment (one object put or
 * deleted) may overlap the next holder's start; and hosts of the same name with separate process
 * namespaces would take each other's leases for dead. Thread-safe.
 */
public final class GcLease implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(GcLease.class);
    static final String PREFIX = "ferry/v1/gc/lease/";
    /** How long a lease lasts without renewal; renewed every third of it. */
    public static final Duration DEFAULT_LENGTH = Duration.ofMinutes(5);
    /** Rounds of claim, list and step back before contenders that keep colliding give up. */
    private static final int ATTEMPTS = 20;
    private static final int MAX_OBJECT = 4096;

    /** Who a lease says holds it: a person's words, and the host and process to tell a dead one. */
    public record Holder(String user, String host, long pid) {
        /** This process. */
        public static Holder current() {
            String host;
            try {
                host = Files.readString(Path.of("/proc/sys/kernel/hostname")).trim();
            } catch (IOException | RuntimeException e) {
                host = System.getenv().getOrDefault("HOSTNAME", "unknown-host");
            }
            return new Holder(System.getProperty("user.name", "unknown"), host, ProcessHandle.current().pid());
        }

        @Override
        public String toString() {
            return user + "@" + host + " (pid " + pid + ")";
        }
    }

    /** Another gc holds the lease: not worth retrying until it ends or its lease expires. */
    public static final class HeldException extends IOException {
        private final Holder holder;
        private final Instant expires;

        HeldException(String message, Holder holder, Instant expires) {
            super(message);
            this.holder = holder;
            this.expires = expires;
        }

        public Holder holder() {
            return holder;
        }

        public Instant expires() {
            return expires;
        }
    }

    /** One object under the prefix, as read. */
    private record Entry(String key, Holder holder, Instant expires, boolean held) {}

    private final Store store;
    private final String key;
    private final Holder holder;
    private final Duration length;
    private final Clock clock;
    private final ScheduledExecutorService renewer;
    private Instant expires;
    private volatile String lost;

    private GcLease(Store store, String key, Holder holder, Duration length, Clock clock, Instant expires) {
        this.store = store;
        this.key = key;
        this.holder = holder;
        this.length = length;
        this.clock = clock;
        this.expires = expires;
        this.renewer = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("ferry-gc-lease"));
    }

    /**
     * Takes the store's gc lease for {@code holder}, for {@code length} at a time, renewed every
     * third of it in the background until {@link #close()}; throws {@link HeldException} when
     * another gc holds it.
     */
    public static GcLease acquire(Store store, Holder holder, Duration length, Clock clock) throws IOException {
        if (length.isNegative() || length.isZero()) {
            throw new IllegalArgumentException("a gc lease must last a positive time, got " + length);
        }
        String key = PREFIX + safe(holder.host()) + "-" + holder.pid() + "-"
                + HexFormat.of().formatHex(ByteBuffer.allocate(8)
                        .putLong(ThreadLocalRandom.current().nextLong()).array());
        List<Entry> others = List.of();
        TransientStoreException trouble = null;
        for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
            try {
                others = others(store, key, clock);
                refuseIfHeld(store, others);
                if (others.isEmpty()) {
                    // as stored
                    Instant until = clock.instant().plus(length).truncatedTo(ChronoUnit.MILLIS);
                    store.put(key, encode(holder, until, false));
                    others = others(store, key, clock);
                    if (others.isEmpty()) {
                        store.put(key, encode(holder, until, true));
                        GcLease lease = new GcLease(store, key, holder, length, clock, until);
                        long every = Math.max(1, length.toMillis() / 3);
                        lease.renewer.scheduleWithFixedDelay(lease::renewQuietly, every, every, TimeUnit.MILLISECONDS);
                        return lease;
                    }
                    store.delete(key);
                    refuseIfHeld(store, others);
                }
            } catch (TransientStoreException e) {
                // e.g. a POSIX listing that met a contender's put renaming its temporary file: a collision,
                // retried as one. Our claim goes (if it was written): the lease was not taken.
                trouble = e;
                try {
                    store.delete(key);
                } catch (TransientStoreException again) {
                    // left as a claim: it expires, and meanwhile only makes contenders step back
                }
            }
            try {
                Thread.sleep(ThreadLocalRandom.current().nextLong(20, 20 + 40L * attempt));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while taking the gc lease of " + store.uri());
            }
        }
        if (others.isEmpty()) {
            throw trouble != null ? trouble : new IOException("gc of " + store.uri() + ": cannot take the gc lease");
        }
        Entry e = others.get(0);
        throw new HeldException("gc of " + store.uri() + ": " + e.holder()
                + " has been claiming the gc lease at the same time"
                + " through " + ATTEMPTS + " tries; one gc at a time: try again once it has finished",
                e.holder(), e.expires());
    }

    private static void refuseIfHeld(Store store, List<Entry> others) throws HeldException {
        Optional<Entry> held = others.stream().filter(Entry::held).findFirst();
        if (held.isPresent()) {
            Entry e = held.get();
            throw new HeldException("another gc of " + store.uri() + " is running: " + e.holder()
                    + " holds the gc lease ("
                    + e.key() + ") until " + e.expires() + " and renews it while it runs; wait for it to finish (if it"
                    + " crashed on another host, its lease is taken over once it expires)", e.holder(), e.expires());
        }
    }

    /** The live lease objects other than {@code own}; stale ones (expired, or of a dead process here) are deleted. */
    private static List<Entry> others(Store store, String own, Clock clock) throws IOException {
        List<Entry> out = new ArrayList<>();
        Holder me = Holder.current();
        for (String k : store.list(PREFIX)) {
            if (k.equals(own)) {
                continue;
            }
            Entry e;
            try {
                e = decode(k, store.getAtMost(k, MAX_OBJECT));
            } catch (ObjectNotFoundException released) {
                continue;
            }
            boolean expired = !clock.instant().isBefore(e.expires());
            boolean deadHere = e.holder().host().equals(me.host()) && ProcessHandle.of(e.holder().pid()).isEmpty();
            if (expired || deadHere) {
                LOG.warn("gc of {}: taking over the gc lease of {}: {}", store.uri(), e.holder(), expired
                        ? "it expired at " + e.expires() : "its process no longer runs on this host");
                store.delete(k);
                continue;
            }
            out.add(e);
        }
        return out;
    }

    /**
     * Renews the lease for its length from now; throws, and marks the
     * lease lost, when it was taken over or has expired before it could be renewed.
     */
    public synchronized void renew() throws IOException {
        check();
        Instant now = clock.instant();
        if (!now.isBefore(expires)) {
            lost = "it expired at " + expires + " before it could be renewed";
        } else {
            try {
                decode(key, store.getAtMost(key, MAX_OBJECT));
            } catch (ObjectNotFoundException gone) {
                lost = "another gc took it over";
            }
        }
        check();
        Instant until = now.plus(length).truncatedTo(ChronoUnit.MILLIS);
        store.put(key, encode(holder, until, true));
        expires = until;
    }

    private void renewQuietly() {
        try {
            renew();
        } catch (IOException e) {
            // lost: check() says so to the gc; otherwise the next renewal tries again, until the lease expires
            LOG.warn("gc of {}: cannot renew the gc lease: {}", store.uri(), e.getMessage());
        }
    }

    /** Throws when the lease is lost: the gc must stop. Cheap: called between objects. */
    public void check() throws IOException {
        String why = lost;
        if (why != null) {
            throw new IOException("gc of " + store.uri() + " stops: it lost the gc lease (" + why + ")");
        }
    }

    /** When the lease expires unless renewed. */
    public synchronized Instant expires() {
        return expires;
    }

    /** Stops renewing and deletes the lease object. */
    @Override
    public void close() throws IOException {
        renewer.shutdownNow();
        synchronized (this) {
            store.delete(key);
        }
    }

    private static ByteBuffer encode(Holder h, Instant until, boolean held) {
        String s = "user " + h.user() + "\nhost " + h.host() + "\npid " + h.pid() + "\nexpires " + until.toEpochMilli()
                + "\nstate " + (held ? "held" : "claim") + "\n";
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
    }

    private static Entry decode(String key, byte[] bytes) throws IOException {
        Map<String, String> f = new HashMap<>();
        for (String line : new String(bytes, StandardCharsets.UTF_8).split("\n")) {
            int sp = line.indexOf(' ');
            if (sp > 0) {
                f.put(line.substring(0, sp), line.substring(sp + 1));
            }
        }
        try {
            return new Entry(key, new Holder(f.getOrDefault("user", "?"), f.getOrDefault("host", "?"),
                    Long.parseLong(f.getOrDefault("pid", "-1"))),
                    Instant.ofEpochMilli(Long.parseLong(f.get("expires"))),
                    !"claim".equals(f.get("state")));
        } catch (RuntimeException e) {
            throw new IOException("gc lease " + key + " is damaged ('"
                    + new String(bytes, StandardCharsets.UTF_8).strip()
                    + "'): delete it if no gc runs on this store", e);
        }
    }

    /** A host name as one key part: [A-Za-z0-9._-], not starting with '.'. */
    private static String safe(String host) {
        String s = host.replaceAll("[^A-Za-z0-9._-]", "_");
        return s.isEmpty() || s.startsWith(".") ? "_" + s : s;
    }
}
