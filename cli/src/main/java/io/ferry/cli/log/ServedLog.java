package io.ferry.cli.log;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.PatternLayout;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.Layout;
import ch.qos.logback.core.OutputStreamAppender;
import ch.qos.logback.core.UnsynchronizedAppenderBase;
import ch.qos.logback.core.encoder.LayoutWrappingEncoder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.PrintWriter;

/**
 * The log lines of a command that {@code ferry daemon} serves, sent to that command's client too, as
 * a command in its own JVM prints them to its stderr: a store's retries during a served push show on
 * the user's terminal, not only in the daemon's log (which still gets every line).
 *
 * <p>Which command a line belongs to follows the thread that logs it: the serving thread opens a
 * {@link Sink}, and the threads it starts (the command's staging workers, its pull's flusher) inherit
 * it. A thread that outlives its command (a JVM-wide pool started during it) keeps a closed sink, and
 * its lines go to the daemon's log only; so do lines of threads no command started. Lines are laid
 * out as the daemon's own stderr appender lays them out (its layout, where it is one), else as
 * {@code LEVEL logger: message}. Thread-safe, and unsynchronized: a client slow to read holds up only its
 * own command's logging threads, not the daemon's other commands.
 */
public final class ServedLog extends UnsynchronizedAppenderBase<ILoggingEvent> {
    /** The appender's name on the root logger. */
    public static final String NAME = "FERRY_SERVED";
    private static final InheritableThreadLocal<Sink> SINK = new InheritableThreadLocal<>();
    private final Layout<ILoggingEvent> layout;

    private ServedLog(Layout<ILoggingEvent> layout) {
        this.layout = layout;
    }

    /** Where one served command's lines go, open until {@link #close()}. */
    public static final class Sink implements AutoCloseable {
        private volatile PrintWriter err;

        private Sink(PrintWriter err) {
            this.err = err;
        }

        /** Ends the command's routing: its threads' later lines go to the daemon's log only. */
        @Override
        public void close() {
            err = null;
            SINK.remove();
        }
    }

    /** Routes this thread's lines, and those of the threads it starts from now on, to {@code err} until closed. */
    public static Sink open(PrintWriter err) {
        Sink s = new Sink(err);
        SINK.set(s);
        return s;
    }

    /**
     * Adds the appender to the root logger, once; false where slf4j is bound to another provider than Logback
     * (then served commands' lines stay in the daemon's log).
     */
    public static synchronized boolean install() {
        if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext context)) {
            return false;
        }
        ch.qos.logback.classic.Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        if (root.getAppender(NAME) != null) {
            return true;
        }
        ServedLog appender = new ServedLog(layoutOf(context, root));
        appender.setContext(context);
        appender.setName(NAME);
        appender.start();
        root.addAppender(appender);
        return true;
    }

    /** The layout of the first appender of the root logger that writes a stream through one, else a plain one. */
    private static Layout<ILoggingEvent> layoutOf(LoggerContext context, ch.qos.logback.classic.Logger root) {
        for (var it = root.iteratorForAppenders(); it.hasNext(); ) {
            Appender<ILoggingEvent> a = it.next();
            if (a instanceof OutputStreamAppender<ILoggingEvent> o
                    && o.getEncoder() instanceof LayoutWrappingEncoder<ILoggingEvent> e && e.getLayout() != null) {
                return e.getLayout();
            }
        }
        PatternLayout plain = new PatternLayout();
        plain.setContext(context);
        plain.setPattern("%-5level %logger{1}: %msg%n");
        plain.start();
        return plain;
    }

    @Override
    protected void append(ILoggingEvent event) {
        Sink s = SINK.get();
        PrintWriter err = s == null ? null : s.err;
        if (err == null) {
            return;
        }
        String line = layout.doLayout(event);
        synchronized (err) {
            err.print(line);
            err.flush();
        }
    }
}
