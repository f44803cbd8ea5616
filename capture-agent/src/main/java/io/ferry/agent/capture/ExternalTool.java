package io.ferry.agent.capture;

import java.io.File;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Runs a checkpointer's own command line (criu, dmtcp_command) and keeps what it said. Stateless. */
final class ExternalTool {
    record Result(int exit, String output) {
        /** The last few non-blank lines, joined: a tool says last why it failed, and just before, what. */
        String lastLines(int n) {
            List<String> lines = output.lines().map(String::trim).filter(l -> !l.isEmpty()).toList();
            return lines.isEmpty() ? "(no output)"
                    : String.join(" / ", lines.subList(Math.max(0, lines.size() - n), lines.size()));
        }

        /** The last few lines that say "Error" (CRIU's log says much else around them), else {@link #lastLines}. */
        String errorLines(int n) {
            List<String> errors = output.lines().map(String::trim).filter(l -> l.contains("Error")).toList();
            return errors.isEmpty() ? lastLines(n)
                    : String.join(" / ", errors.subList(Math.max(0, errors.size() - n), errors.size()));
        }
    }

    private ExternalTool() {
    }

    static Optional<Path> onPath(String name) {
        String path = System.getenv().getOrDefault("PATH", "/usr/bin:/bin");
        for (String d : path.split(File.pathSeparator)) {
            Path p = Path.of(d.isEmpty() ? "." : d, name);
            if (Files.isExecutable(p)) {
                return Optional.of(p);
            }
        }
        for (String d : List.of("/usr/sbin", "/sbin", "/usr/local/sbin")) { // criu lives in sbin
            Path p = Path.of(d, name);
            if (Files.isExecutable(p)) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }

    static Result run(List<String> command, Duration timeout) throws IOException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.PIPE).start();
        p.getOutputStream().close();
        var out = CompletableFuture.supplyAsync(() -> {
            try {
                return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                return e.toString();
            }
        });
        try {
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new IOException(command.get(0) + " did not finish within " + timeout.toSeconds() + " s");
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new InterruptedIOException(command.get(0) + " interrupted");
        }
        return new Result(p.exitValue(), out.join());
    }
}
