package io.ferry.benchmarks;

import java.io.IOException;

/** Shell commands the end-to-end benchmarks run, as a user would type them (bash, pipefail), and their wall time. */
final class Shell {
    private Shell() {}

    /** Runs {@code cmd} with its output on this process's; an {@link IOException} unless it exits 0. */
    static void sh(String cmd) throws IOException {
        try {
            Process p = new ProcessBuilder("bash", "-o", "pipefail", "-c", cmd).inheritIO().start();
            if (p.waitFor() != 0) {
                throw new IOException("command failed (" + p.exitValue() + "): " + cmd);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted: " + cmd, e);
        }
    }

    /** {@link #sh}, timed: its wall-clock seconds. */
    static double timed(String cmd) throws IOException {
        long t0 = System.nanoTime();
        sh(cmd);
        return (System.nanoTime() - t0) / 1e9;
    }
}
