package io.ferry.model;

import org.junit.jupiter.api.Test;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DaemonThreadsTest {
    @Test
    void namedThreadsAreDaemonsOfThatNameAndNotStarted() {
        ThreadFactory f = DaemonThreads.named("ferry-test");
        Thread a = f.newThread(() -> { });
        Thread b = f.newThread(() -> { });
        assertEquals("ferry-test", a.getName());
        assertEquals("ferry-test", b.getName());
        assertTrue(a.isDaemon() && b.isDaemon());
        assertEquals(Thread.State.NEW, a.getState());
    }

    @Test
    void numberedThreadsCountFromOneForEachFactory() {
        ThreadFactory f = DaemonThreads.numbered("ferry-pool");
        assertEquals("ferry-pool-1", f.newThread(() -> { }).getName());
        assertEquals("ferry-pool-2", f.newThread(() -> { }).getName());
        assertEquals("ferry-pool-1", DaemonThreads.numbered("ferry-pool").newThread(() -> { }).getName());
    }

    @Test
    void startRunsTheBodyOnADaemonAndUnstartedWaitsForItsOwner() throws Exception {
        CountDownLatch ran = new CountDownLatch(1);
        Thread t = DaemonThreads.start("ferry-once", ran::countDown);
        assertTrue(ran.await(10, TimeUnit.SECONDS));
        assertTrue(t.isDaemon());
        assertEquals("ferry-once", t.getName());
        Thread later = DaemonThreads.unstarted("ferry-later", () -> { });
        assertFalse(later.isAlive());
        assertEquals(Thread.State.NEW, later.getState());
        assertTrue(later.isDaemon());
    }
}
