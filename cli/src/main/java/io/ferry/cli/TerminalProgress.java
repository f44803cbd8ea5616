package io.ferry.cli;

import io.ferry.model.Sizes;
import io.ferry.staging.Progress;

import java.io.PrintWriter;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A one-line progress bar redrawn at most five times a second on a terminal's stderr.
 * Silent when the caller is not at a terminal (logs and pipes stay clean), unless
 * {@code FERRY_PROGRESS=1}. Thread-safe.
 */
final class TerminalProgress implements Progress {
    private final PrintWriter out;
    private final AtomicLong done = new AtomicLong();
    private volatile long total;
    private volatile String what = "";
    private volatile Unit unit = Unit.BYTES;
    private volatile long started;
    private volatile long lastDraw;

    private TerminalProgress(PrintWriter out) {
        this.out = out;
    }

    /** A bar on the stderr of the current {@link Invocation}: this process's, or a daemon client's. */
    static Progress forStderr() {
        Invocation inv = Invocation.current();
        boolean tty = inv.console() || "1".equals(System.getenv("FERRY_PROGRESS"));
        return tty ? new TerminalProgress(inv.err()) : Progress.NONE;
    }

    @Override
    public void start(String what, long total, Unit unit) {
        this.what = what;
        this.total = total;
        this.unit = unit;
        this.started = System.nanoTime();
        done.set(0);
    }

    @Override
    public void advance(long bytes) {
        done.addAndGet(bytes);
        long now = System.nanoTime();
        if (now - lastDraw > 200_000_000L) {
            lastDraw = now;
            draw(now);
        }
    }

    @Override
    public void finish() {
        draw(System.nanoTime());
        synchronized (out) {
            out.println();
        }
    }

    private void draw(long now) {
        long d = done.get();
        double frac = total == 0 ? 1 : Math.min(1, (double) d / total);
        int width = 30;
        int filled = (int) (frac * width);
        double secs = Math.max(1e-3, (now - started) / 1e9);
        String counts = unit == Unit.BYTES
                ? String.format(Locale.ROOT, "%s / %s  %.0f MB/s", Sizes.format(d), Sizes.format(total), d / 1e6 / secs)
                : String.format(Locale.ROOT, "%d / %d  %.0f/s", d, total, d / secs);
        String line = String.format(Locale.ROOT, "\r%-28s [%s%s] %3.0f%% %s", what,
                "=".repeat(filled), " ".repeat(width - filled), frac * 100, counts);
        synchronized (out) {
            out.print(line);
            out.flush();
        }
    }
}
