package io.ferry.cli;

import io.ferry.stores.Store;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * One store as a user's {@code ferry} commands name it (its URI, and its options as
 * {@code --set KEY=VALUE}), and the commands {@link StoreGcOnEveryStoreIT} runs on it:
 * {@code ferry store gc} as a child process SIGKILLed among its first moves aside, then
 * {@code ferry store verify} and {@code ferry image pull} on what it left (in the test's JVM: {@link InProcessFerry}).
 */
final class StoreCommands {
    /** Where gc moves what it collects (StoreGc's prefix; the store's own listing counts it). */
    static final String FOSSILS = "ferry/v1/fossils/";

    /** How a killed command ended: whether it still ran when killed, and what it said until then. */
    record Killed(boolean running, String said) {}

    private final String uri;
    private final Map<String, String> options;

    StoreCommands(String uri, Map<String, String> options) {
        this.uri = uri;
        this.options = options;
    }

    String uri() {
        return uri;
    }

    Map<String, String> options() {
        return options;
    }

    /** How many objects {@code s} lists under {@code prefix}. */
    static int count(Store s, String prefix) throws Exception {
        return s.list(prefix).size();
    }

    /** {@code ferry store SUBCOMMAND URI ARGS...} on this store, with its options. */
    String[] store(String subcommand, String... args) {
        List<String> cmd = new ArrayList<>(List.of("store", subcommand, uri));
        cmd.addAll(List.of(args));
        return withOptions(cmd);
    }

    /** {@code ferry ARGS... --store URI} on this store, with its options. */
    String[] withStore(String... args) {
        List<String> cmd = new ArrayList<>(List.of(args));
        cmd.addAll(List.of("--store", uri));
        return withOptions(cmd);
    }

    private String[] withOptions(List<String> cmd) {
        options.forEach((k, v) -> cmd.addAll(List.of("--set", k + "=" + v)));
        return cmd.toArray(String[]::new);
    }

    /**
     * {@code ferry store gc --grace 0s} (in a JVM of 256 MiB), SIGKILLed once {@code s}, the
     * test's own client of this store, lists {@code moves} objects moved aside, or once the gc
     * ended by itself or ran 120 s.
     */
    Killed gcKilledAfter(Store s, int moves) throws Exception {
        Process gc = FerryProcess.builder(List.of("-Xmx256m"), store("gc", "--grace", "0s"))
                .redirectErrorStream(true).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (count(s, FOSSILS) < moves && gc.isAlive() && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        boolean running = gc.isAlive();
        gc.toHandle().destroyForcibly(); // SIGKILL, among the moves
        gc.waitFor();
        return new Killed(running, new String(gc.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
    }

    /**
     * {@code ferry store verify}, which must pass, then {@code ferry image pull} of job "sim"'s
     * generation 1, rank 0, into {@code out}, which must succeed.
     */
    void verifyAndPull(Path out) throws Exception {
        FerryProcess.Result verify = FerryProcess.run(store("verify"));
        assertEquals(0, verify.exit(), verify.out() + verify.err());
        FerryProcess.Result pull = FerryProcess.run(withStore("image", "pull", "--job", "sim", "--generation", "1",
                "--rank", "0", out.toString()));
        assertEquals(0, pull.exit(), pull.out() + pull.err());
    }
}
