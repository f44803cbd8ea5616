package io.ferry.model;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Ferry's background threads: daemons (a process never waits for one to end) with a name that
 * says what each does, as a thread dump and the logs show it. Every executor and thread of the
 * modules is made here.
 */
public final class DaemonThreads {
    private DaemonThreads() {
    }

    /** Daemon threads, each named {@code name}: for a single-thread executor, or a pool whose threads do one thing. */
    public static ThreadFactory named(String name) {
        return body -> unstarted(name, body);
    }

    /** Daemon threads named {@code prefix-1}, {@code prefix-2}, ...: for a pool whose threads a dump tells apart. */
    public static ThreadFactory numbered(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return body -> unstarted(prefix + "-" + n.incrementAndGet(), body);
    }

    /** A daemon thread named {@code name} that runs {@code body}, started. */
    public static Thread start(String name, Runnable body) {
        Thread t = unstarted(name, body);
        t.start();
        return t;
    }

    /** A daemon thread named {@code name} that runs {@code body}, for its owner to start. */
    public static Thread unstarted(String name, Runnable body) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        return t;
    }

    /** Sleeps {@code millis}; an interrupt ends the sleep early and stays set for the caller's loop to see. */
    public static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
