package io.ferry.agent;

import io.ferry.agent.capture.Capturers;

import java.time.Duration;

/**
 * How the agent stops a rank for a checkpoint.
 *
 * @param method  {@code app} (the cooperative protocol, default), or a transparent method:
 *                {@code proc}, {@code criu}, {@code dmtcp} (see {@link Capturers})
 * @param timeout how long a checkpoint waits for every rank (app: its answer; others: the dump)
 * @param signal  the signal of the protocol's signal mode (name without SIG, e.g. USR2)
 * @param helloGrace how long after its start a rank that has not said HELLO, and does not catch the
 *                signal yet, is waited for before a checkpoint signals it anyway (a JVM, or an MPI rank
 *                in MPI_Init, may take a moment to connect, and the signal would end it)
 */
public record Quiesce(String method, Duration timeout, String signal, Duration helloGrace) {
    /** The grace ranks get to say HELLO (or to install their signal handler), unless told otherwise. */
    public static final Duration HELLO_GRACE = Duration.ofSeconds(5);

    public Quiesce(String method, Duration timeout, String signal) {
        this(method, timeout, signal, HELLO_GRACE);
    }

    public Quiesce {
        if (helloGrace == null || helloGrace.isNegative()) {
            throw new IllegalArgumentException("HELLO grace must be zero or more, got " + helloGrace);
        }
        if (!Capturers.METHODS.contains(method)) {
            throw new IllegalArgumentException("unknown capture method '" + method + "': one of " + Capturers.METHODS);
        }
        if (!signal.matches("[A-Z0-9]{2,8}")) {
            throw new IllegalArgumentException("signal must be a name like USR2, got '" + signal + "'");
        }
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("capture timeout must be positive, got " + timeout);
        }
    }

    /** The cooperative protocol with this timeout and signal. */
    public static Quiesce app(Duration timeout, String signal) {
        return new Quiesce("app", timeout, signal);
    }

    public boolean cooperative() {
        return method.equals("app");
    }
}
