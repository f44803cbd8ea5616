package io.ferry.cli;

import io.ferry.agent.capture.Capturer;
import io.ferry.agent.capture.Capturers;
import io.ferry.staging.Progress;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/** {@code ferry capture}: a one-off transparent dump of a running process, e.g. a hung rank for gdb. */
@Command(name = "capture", mixinStandardHelpOptions = true,
        description = {"Dump a running process without its help, for post-mortem debugging of a hung run.",
                "proc: freezes its process group, writes core.<pid> (an ELF core gdb opens, zero"
                        + " pages as holes), thaws it.",
                "criu: dumps its process tree with the files it has open for writing; `ferry restore DIR` restores it.",
                "The process continues as before. Restoring a proc image needs an external restorer."})
final class CaptureCommand implements Callable<Integer> {
    @Option(names = "--pid", required = true, paramLabel = "PID", description = "The process to capture.")
    long pid;
    @Option(names = "--method", defaultValue = "proc", paramLabel = "METHOD",
            description = "proc (default) or criu; dmtcp captures only jobs run with ferry run --capture dmtcp.")
    String method;
    @Option(names = "--out", required = true, paramLabel = "DIR", description = "New directory for the image.")
    Path out;
    @CommandLine.Mixin
    Report report;

    @Override
    public Integer call() throws Exception {
        if (pid < 1) {
            throw new IllegalArgumentException("--pid must be a process id >= 1, got " + pid);
        }
        if ("app".equals(method)) {
            throw new IllegalArgumentException(
                    "--method app is the cooperative protocol of ferry run; capture takes proc or criu");
        }
        Capturer c = Capturers.of(method);
        c.unavailable().ifPresent(why -> {
            throw new IllegalStateException(method + " capture is not available here: " + why);
        });
        String program = program(pid);
        Capturer.Captured r = c.capture(pid, null, out,
                report.json ? Progress.NONE : TerminalProgress.forStderr());
        String gdb = "proc".equals(method) ? "gdb " + program + " " + out.toAbsolutePath().resolve("core." + pid)
                : null;
        // criu: ferry restore puts back the files and pipes the image carries beside the process; criu restore alone
        // does not.
        String restart = "criu".equals(method) ? "ferry restore " + out.toAbsolutePath()
                : c.restartCommand(out.toAbsolutePath()).map(cmd -> String.join(" ", cmd)).orElse(null);
        StringBuilder text = new StringBuilder(r.summary()).append("\nimage: ").append(out.toAbsolutePath());
        if (gdb != null) {
            text.append("\nopen it with: ").append(gdb);
        }
        text.append(restart != null ? "\nrestart with: " + restart
                : "\nrestore: a proc image needs an external restorer; Ferry cannot restart it");
        report.print(System.out, text.toString(), "pid", pid, "method", method, "image",
                out.toAbsolutePath().toString(),
                "bytes", r.imageBytes(), "stallSeconds", r.stall().toNanos() / 1e9, "gdb", gdb, "restartCommand",
                restart);
        return 0;
    }

    /** The executable gdb wants beside the core, if this user may see it. */
    private static String program(long pid) {
        try {
            return Files.readSymbolicLink(Path.of("/proc", Long.toString(pid), "exe")).toString();
        } catch (IOException | UnsupportedOperationException e) {
            return "PROGRAM"; // gone or not ours: the capture itself will say which
        }
    }
}
