package io.ferry.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Runs the real {@code ferry} command as a child JVM on this test's classpath, its classes mapped from one
 * archive ({@link ChildClassData}).
 */
final class FerryProcess {
    record Result(int exit, String out, String err) {}

    private FerryProcess() {}

    /**
     * JVM options of every child, before the test's own: the system property {@code ferry.it.child-jvm},
     * comma-separated (blank: none). The suite sets C1 only and the serial collector: its children are short-lived
     * and move megabytes, so C2's compilations and parallel GC threads are CPU the 2-core machine
     * would rather give to the next test.
     */
    static List<String> childJvmOptions() {
        String opts = System.getProperty("ferry.it.child-jvm", "").trim();
        return opts.isEmpty() ? List.of() : List.of(opts.split(","));
    }

    static ProcessBuilder builder(List<String> jvmArgs, String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(childJvmOptions());
        ChildClassData.Plan cds = ChildClassData.plan();
        cmd.addAll(cds.jvmOptions());
        cmd.addAll(jvmArgs);
        cmd.add("-cp");
        cmd.add(cds.classPath());
        cmd.add(Main.class.getName());
        cmd.addAll(List.of(args));
        return new ProcessBuilder(cmd);
    }

    static Result run(List<String> jvmArgs, String... args) throws IOException, InterruptedException {
        return run(builder(jvmArgs, args));
    }

    /** Runs {@code pb} (made by {@link #builder}, its environment set) to its end. */
    static Result run(ProcessBuilder pb) throws IOException, InterruptedException {
        Process p = pb.start();
        // Drain stderr on another thread so a chatty child cannot block on a full pipe.
        var err = CompletableFuture.supplyAsync(() -> {
            try {
                return new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                return e.toString();
            }
        });
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(5, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new AssertionError(String.join(" ", pb.command()) + " did not finish");
        }
        return new Result(p.exitValue(), out, err.join());
    }

    /**
     * Runs {@code args} to its end: here in this JVM where it is a short command ({@link InProcessFerry}), else as a
     * child. A test that needs a process (its environment, its options, to kill it) starts one by {@link #builder}.
     */
    static Result run(String... args) throws IOException, InterruptedException {
        if (InProcessFerry.serves(List.of(args))) {
            return InProcessFerry.run(args);
        }
        return run(List.of(), args);
    }
}
