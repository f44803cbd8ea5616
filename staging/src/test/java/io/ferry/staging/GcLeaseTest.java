package io.ferry.staging;

import io.ferry.stores.Store;
import io.ferry.stores.Stores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The store's gc lease on a real POSIX store: one gc at a time, stale leases taken over, renewal, release. */
class GcLeaseTest {
    private static final Duration LENGTH = Duration.ofMinutes(1);
    private static final Instant T0 = Instant.parse("2026-11-23T10:00:00Z");
    @TempDir
    Path tmp;

    private static Clock at(Instant t) {
        return Clock.fixed(t, ZoneOffset.UTC);
    }

    /** Someone else on this host, alive (this process's pid), so only expiry makes its lease stale. */
    private static GcLease.Holder other(String user) {
        GcLease.Holder me = GcLease.Holder.current();
        return new GcLease.Holder(user, me.host(), me.pid());
    }

    /**
     * Contenders racing for the lease at once, each a gc on its own thread, each keeping what it won
     * until all have answered: exactly one holds it, and every other is refused naming a contender.
     */
    static void exactlyOneOfManyAtOnceHoldsTheLease(Store store) throws Exception {
        int n = 4;
        ExecutorService pool = Executors.newFixedThreadPool(n);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<GcLease>> tries = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            GcLease.Holder h = other("gc" + i);
            tries.add(pool.submit(() -> {
                go.await();
                return GcLease.acquire(store, h, LENGTH, Clock.systemUTC());
            }));
        }
        go.countDown();
        List<GcLease> won = new ArrayList<>();
        List<String> refused = new ArrayList<>();
        for (Future<GcLease> f : tries) {
            try {
                won.add(f.get());
            } catch (ExecutionException e) {
                GcLease.HeldException held = (GcLease.HeldException) e.getCause();
                assertTrue(held.getMessage().contains(held.holder().toString()), held.getMessage());
                refused.add(held.holder().user());
            }
        }
        pool.shutdown();
        assertEquals(1, won.size(), "one gc holds the lease, the others were refused naming " + refused);
        assertEquals(n - 1, refused.size());
        won.get(0).close();
        GcLease.acquire(store, other("after"), LENGTH, Clock.systemUTC()).close(); // released: free again
        assertEquals(List.of(), store.list(GcLease.PREFIX));
    }

    /** A lease whose holder crashed (never renewed, never released) is taken over once it has expired, not before. */
    static void anExpiredLeaseIsTakenOverAndItsHolderLearnsItLostIt(Store store, Repository repo) throws Exception {
        GcLease crashed = GcLease.acquire(store, other("crashed"), LENGTH, at(T0));
        GcLease.HeldException early = assertThrows(GcLease.HeldException.class,
                () -> StoreGc.run(repo, Duration.ofHours(1),
                at(T0.plus(LENGTH).minusSeconds(1)), false, 0, other("second"), LENGTH));
        assertEquals("crashed", early.holder().user());
        assertEquals(T0.plus(LENGTH), early.expires());
        assertTrue(early.getMessage().contains("crashed@") && early.getMessage().contains(T0.plus(LENGTH).toString()),
                early.getMessage());

        StoreGc.run(repo, Duration.ofHours(1), at(T0.plus(LENGTH)), false, 0, other("second"), LENGTH);
        assertEquals(List.of(), store.list(GcLease.PREFIX), "taken over, then released at the end of the run");
        IOException lost = assertThrows(IOException.class, crashed::renew);
        assertTrue(lost.getMessage().contains("lost the gc lease"), lost.getMessage());
        assertThrows(IOException.class, crashed::check);
        crashed.close();
    }

    @Test
    void twoGcRunsAtOnceOnOneStoreExactlyOneProceeds() throws Exception {
        try (Store store = Stores.open(tmp.resolve("store").toUri(), Map.of())) {
            exactlyOneOfManyAtOnceHoldsTheLease(store);
        }
    }

    @Test
    void aGcRefusesWhileAnotherHoldsTheLeaseNamingItAndADryRunNeedsNone() throws Exception {
        try (Store store = Stores.open(tmp.resolve("store").toUri(), Map.of());
             StagingPipeline p = Staging.pipeline(store, StagingConfig.defaults(), Clock.systemUTC())) {
            try (GcLease running = GcLease.acquire(store, other("first"), LENGTH, Clock.systemUTC())) {
                GcLease.HeldException e = assertThrows(GcLease.HeldException.class,
                        () -> StoreGc.run(p.repository(), Duration.ofHours(1), Clock.systemUTC(), false));
                assertTrue(e.getMessage().contains("another gc of " + store.uri() + " is running: first@"),
                        e.getMessage());
                assertTrue(e.getMessage().contains("until " + running.expires()), e.getMessage());
                StoreGc.run(p.repository(), Duration.ofHours(1), Clock.systemUTC(), true); // changes nothing: no lease
            }
            StoreGc.run(p.repository(), Duration.ofHours(1), Clock.systemUTC(), false);
            assertEquals(List.of(), store.list(GcLease.PREFIX));
        }
    }

    @Test
    void anExpiredLeaseIsTakenOver() throws Exception {
        try (Store store = Stores.open(tmp.resolve("store").toUri(), Map.of());
             StagingPipeline p = Staging.pipeline(store, StagingConfig.defaults(), Clock.systemUTC())) {
            anExpiredLeaseIsTakenOverAndItsHolderLearnsItLostIt(store, p.repository());
        }
    }

    @Test
    void aLeaseOfAProcessOfThisHostThatHasEndedIsTakenOverAtOnce() throws Exception {
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        GcLease.Holder me = GcLease.Holder.current();
        try (Store store = Stores.open(tmp.resolve("store").toUri(), Map.of())) {
            GcLease killed = GcLease.acquire(store, new GcLease.Holder("killed", me.host(), gone.pid()),
                    LENGTH, at(T0));
            GcLease.acquire(store, other("next"), LENGTH, at(T0)).close(); // well before its expiry
            assertThrows(IOException.class, killed::renew);
            killed.close();
        }
    }

    @Test
    void aRenewedLeaseOutlastsItsFirstExpiry() throws Exception {
        Instant[] now = {T0};
        Clock moving = new Clock() {
            @Override
            public ZoneId getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(ZoneId zone) {
                return this;
            }

            @Override
            public Instant instant() {
                return now[0];
            }
        };
        try (Store store = Stores.open(tmp.resolve("store").toUri(), Map.of());
             GcLease lease = GcLease.acquire(store, other("long"), LENGTH, moving)) {
            now[0] = T0.plusSeconds(50);
            lease.renew();
            assertEquals(T0.plusSeconds(110), lease.expires());
            // past the first expiry, within the renewed one: still held
            GcLease.HeldException e = assertThrows(GcLease.HeldException.class,
                    () -> GcLease.acquire(store, other("next"), LENGTH, at(T0.plusSeconds(100))));
            assertEquals(T0.plusSeconds(110), e.expires());
            now[0] = T0.plusSeconds(120); // missed its renewal: it knows it lost the lease
            assertThrows(IOException.class, lease::renew);
        }
    }
}
