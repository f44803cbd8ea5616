package io.ferry.cli;

import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Where the suite's CPU goes: each test class's CPU seconds, the child processes it started and waited for
 * included (a `ferry run`'s agents and ranks too, as that run waited for them), one line per class in
 * {@code target/cpu-per-class/PID.tsv} (class, CPU seconds, wall seconds); {@code .ci/run} prints the ten
 * largest. Read from {@code /proc/self/stat} (this JVM's and its reaped children's user and system time),
 * so on Linux only, and exact only where one class runs at a time in a JVM (as Surefire and Failsafe run
 * them here). A process a test leaves running, or one detached from it, is not counted. Registered through
 * {@code META-INF/services}; where anything fails it writes nothing and the tests run on.
 */
public final class CpuPerClass implements TestExecutionListener {
    /** Clock ticks a second of {@code /proc/PID/stat}'s times (USER_HZ: 100 on every Linux port but Alpha's). */
    private static final double TICKS = 100;
    private final Map<String, double[]> started = new HashMap<>();

    @Override
    public void executionStarted(TestIdentifier id) {
        className(id).ifPresent(c -> {
            double cpu = cpuSeconds();
            if (cpu >= 0) {
                started.put(c, new double[]{cpu, System.nanoTime() / 1e9});
            }
        });
    }

    @Override
    public void executionFinished(TestIdentifier id, TestExecutionResult result) {
        className(id).ifPresent(c -> {
            double[] at = started.remove(c);
            double cpu = cpuSeconds();
            if (at == null || cpu < 0) {
                return;
            }
            String line = String.format(Locale.ROOT, "%s\t%.1f\t%.1f%n", c, cpu - at[0], System.nanoTime() / 1e9 - at[1]);
            try {
                Path dir = Files.createDirectories(Path.of("target", "cpu-per-class"));
                Files.writeString(dir.resolve(ProcessHandle.current().pid() + ".tsv"), line, StandardCharsets.UTF_8,
                        StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            } catch (IOException | RuntimeException e) {
                // a measurement only: the tests go on without it
            }
        });
    }

    private static Optional<String> className(TestIdentifier id) {
        return id.getSource().filter(ClassSource.class::isInstance).map(s -> ((ClassSource) s).getClassName());
    }

    /** This JVM's CPU seconds and its reaped children's (utime, stime, cutime, cstime); -1 where unreadable. */
    static double cpuSeconds() {
        try {
            String stat = Files.readString(Path.of("/proc/self/stat"), StandardCharsets.US_ASCII);
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
            // f[0] is field 3 (state): utime, stime, cutime and cstime are fields 14 to 17
            long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]) + Long.parseLong(f[13]) + Long.parseLong(f[14]);
            return ticks / TICKS;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }
}
