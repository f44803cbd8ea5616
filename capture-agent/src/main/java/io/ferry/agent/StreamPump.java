package io.ferry.agent;

import io.ferry.model.DaemonThreads;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;

/** Copies a process's output stream to one of ours on a daemon thread, as the process writes. Stateless. */
public final class StreamPump {
    private StreamPump() {
    }

    /** Starts copying {@code in} to {@code out} until its end, flushing as bytes come; returns the thread. */
    public static Thread start(InputStream in, PrintStream out, String name) {
        return DaemonThreads.start(name, () -> {
            byte[] b = new byte[8192];
            try (in) {
                for (int n; (n = in.read(b)) > 0; ) {
                    out.write(b, 0, n);
                    out.flush();
                }
            } catch (IOException closed) {
                // the process's end of the pipe is gone: nothing more to copy
            }
        });
    }
}
