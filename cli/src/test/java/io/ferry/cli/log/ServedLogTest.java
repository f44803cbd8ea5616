package io.ferry.cli.log;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link ServedLog} on this JVM's real Logback, as {@code ferry daemon} installs it. */
class ServedLogTest {
    private static final Logger LOG = LoggerFactory.getLogger("io.ferry.stores.ResilientStore");

    @BeforeAll
    static void install() {
        assertTrue(ServedLog.install());
        assertTrue(ServedLog.install()); // a second call adds nothing
    }

    @Test
    void aServedCommandsLinesReachItsClientFromItsThreadAndTheThreadsItStarts() throws Exception {
        StringWriter client = new StringWriter();
        ExecutorService workers;
        try (ServedLog.Sink ignored = ServedLog.open(new PrintWriter(client))) {
            LOG.warn("store s3://b: try 1 of 5 failed, retrying in 100 ms: refused");
            workers = Executors.newSingleThreadExecutor(); // started by the command, as a staging pipeline's are
            workers.submit(() -> LOG.warn("from a worker")).get();
            LOG.debug("below the logger's level"); // what the daemon's levels leave out stays out
        }
        String lines = client.toString();
        // laid out as the daemon's stderr appender lays lines out (here, the tests' Logback configuration's)
        assertTrue(lines.lines().allMatch(l -> l.contains("WARN") && l.contains("ResilientStore")), lines);
        assertTrue(lines.contains("store s3://b: try 1 of 5 failed, retrying in 100 ms: refused"), lines);
        assertTrue(lines.contains("from a worker"), lines);
        assertFalse(lines.contains("below the logger's level"), lines);
        assertEquals(2, lines.lines().count(), lines);

        // The command ended: its worker, still alive, logs to the daemon's log only.
        workers.submit(() -> LOG.warn("after the command ended")).get();
        LOG.warn("the serving thread, between commands");
        workers.shutdown();
        assertTrue(workers.awaitTermination(10, TimeUnit.SECONDS));
        assertEquals(lines, client.toString());
    }

    @Test
    void twoCommandsServedAtOnceEachGetTheirOwnLinesOnly() throws Exception {
        StringWriter first = new StringWriter();
        StringWriter second = new StringWriter();
        Thread a = new Thread(() -> {
            try (ServedLog.Sink ignored = ServedLog.open(new PrintWriter(first))) {
                LOG.warn("for the first client");
            }
        });
        Thread b = new Thread(() -> {
            try (ServedLog.Sink ignored = ServedLog.open(new PrintWriter(second))) {
                LOG.warn("for the second client");
            }
        });
        a.start();
        b.start();
        a.join();
        b.join();
        assertTrue(first.toString().contains("for the first client"), first.toString());
        assertFalse(first.toString().contains("second"), first.toString());
        assertTrue(second.toString().contains("for the second client"), second.toString());
        assertFalse(second.toString().contains("first"), second.toString());
    }

    @Test
    void aThreadNoCommandStartedSendsNothing() throws Exception {
        StringWriter client = new StringWriter();
        Thread elsewhere = new Thread(() -> LOG.warn("a thread of the daemon's own"));
        elsewhere.start(); // started before the command: it inherits no sink
        elsewhere.join();
        try (ServedLog.Sink ignored = ServedLog.open(new PrintWriter(client))) {
            Thread child = new Thread(() -> LOG.warn("started by the command"));
            child.start();
            child.join();
        }
        assertEquals(1, client.toString().lines().count(), client.toString());
    }
}
