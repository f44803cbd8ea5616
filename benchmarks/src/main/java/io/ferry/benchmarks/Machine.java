package io.ferry.benchmarks;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/** What the benchmarks report about the machine they ran on: its load, and the heap in use. */
final class Machine {
    private Machine() {}

    /** Used heap after full GCs: the least of three, 200 ms apart. */
    static long usedHeapAfterGc() throws InterruptedException {
        long best = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            ManagementFactory.getMemoryMXBean().gc();
            Thread.sleep(200);
            best = Math.min(best, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return best;
    }

    /** {@code /proc/loadavg}, or "unknown". */
    static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).trim();
        } catch (IOException e) {
            return "unknown";
        }
    }
}
