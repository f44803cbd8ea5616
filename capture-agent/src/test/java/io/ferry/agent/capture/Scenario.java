package io.ferry.agent.capture;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The C programs of the checkpoint/restart scenarios ({@code src/test/resources/scenario}),
 * compiled once with gcc, and what the tests do with them: follow the steps a running one
 * prints, kill one as a crash would, and run one uninterrupted for the reference result.
 */
final class Scenario {
    private Scenario() {
    }

    /** {@code target/<name>}, compiled from {@code scenario/<name>.c}. */
    static Path binary(String name) throws IOException, InterruptedException {
        return compileOnce("/scenario/" + name + ".c", name, "-O1", "-pthread");
    }

    /**
     * {@code target/<name>}, compiled with gcc and {@code flags} from the class-path resource {@code source} where it
     * is not there yet. It is built beside its place and moved there whole: the other forks' test classes may exec it
     * meanwhile, and one that ran it while gcc still wrote it failed ("Text file busy"; a rehearsal, 2026-12-01).
     */
    static Path compileOnce(String source, String name, String... flags) throws IOException, InterruptedException {
        Path bin = Path.of("target", name).toAbsolutePath();
        if (!Files.exists(bin)) {
            Path src = Files.createTempFile(Path.of("target"), name, ".c");
            try (var in = Scenario.class.getResourceAsStream(source)) {
                Files.write(src, in.readAllBytes());
            }
            Path built = Files.createTempFile(Path.of("target"), name, ".bin");
            List<String> cmd = new ArrayList<>(List.of("gcc"));
            cmd.addAll(List.of(flags));
            cmd.addAll(List.of("-o", built.toString(), src.toString()));
            Process gcc = new ProcessBuilder(cmd).inheritIO().start();
            if (gcc.waitFor() != 0) {
                throw new IOException("gcc failed on " + source);
            }
            Files.move(built, bin, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        }
        return bin;
    }

    /** The file {@code name OUT STEPS 0} leaves when nothing interrupts it. */
    static String reference(String name, Path out, int steps) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(binary(name).toString(), out.toString(), Integer.toString(steps), "0")
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (p.waitFor() != 0) {
            throw new IOException(name + " failed uninterrupted");
        }
        return Files.readString(out);
    }

    /** Skips the test, saying why, where {@code c} cannot run here; never passes it silently. */
    static void requireAvailable(Capturer c) {
        Optional<String> why = c.unavailable().map(w -> w + "; " + TOOLS_HINT);
        why.ifPresent(w -> System.err.println("SKIPPED " + c.method() + " test: " + w));
        assumeTrue(why.isEmpty(), () -> c.method() + " unavailable: " + why.orElse(""));
    }

    /** Where the tools come from, as this clone stands (module tests run in the module's directory). */
    static final String TOOLS_HINT = Files.exists(Path.of("..", "..", "shared", "tools", "install-checkpointers.sh"))
            ? "../shared/tools/install-checkpointers.sh builds DMTCP and CRIU and prints the directory to put on PATH"
            : "this clone has no ../shared beside it, whose tools/install-checkpointers.sh .ci/run"
                    + " uses to build DMTCP and CRIU";

    /** SIGKILLs {@code p} and every process under it, as a crash of the node's rank would, and waits for its end. */
    static void kill(Process p) throws InterruptedException {
        List<ProcessHandle> under = p.descendants().toList();
        p.destroyForcibly();
        under.forEach(ProcessHandle::destroyForcibly);
        p.waitFor();
        for (ProcessHandle h : under) {
            h.onExit().join();
        }
    }

    /** The "step N" lines a scenario program prints. */
    static final class Steps implements AutoCloseable {
        private final BufferedReader in;
        private final Process process;

        Steps(Process p) {
            this.process = p;
            this.in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.US_ASCII));
        }

        /** The next step printed; -1 once the program's output ended. */
        int next() throws IOException {
            for (String l; (l = in.readLine()) != null; ) {
                if (l.startsWith("step ")) {
                    return Integer.parseInt(l.substring(5).trim());
                }
            }
            return -1;
        }

        /** Reads on to the first step at least {@code n}, and returns it; fails at the end of the output. */
        int awaitStep(int n) throws IOException {
            for (int s; (s = next()) >= 0; ) {
                if (s >= n) {
                    return s;
                }
            }
            throw new IOException("the program's output ended before step " + n);
        }

        /** Reads the output to its end and returns the exit code (the test's own timeout bounds the wait). */
        int awaitExit() throws IOException, InterruptedException {
            while (next() >= 0) {
                // drain
            }
            process.waitFor(10, TimeUnit.MINUTES);
            return process.exitValue();
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }
}
