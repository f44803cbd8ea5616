package io.ferry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ferry.stores.s3.S3ProxyServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code ferry daemon} and its two clients ({@link ThinClient} in a JVM, {@code bin/ferry-daemon-client} on
 * Python), real child processes over a real Unix socket:
 * a served command resolves paths, prints and exits as the same command in its own JVM; a client
 * it must not serve is declined with nothing done; a client killed mid-push has its push
 * interrupted (no manifest, the store verifies) and the daemon serves on; a stale daemon exits.
 */
class DaemonIT {
    @TempDir
    Path tmp;
    private Path socket;
    private Path log;
    private Process daemon;

    @BeforeEach
    void startDaemon() throws Exception {
        socket = tmp.resolve("run/daemon.sock");
        log = tmp.resolve("daemon.log");
        ProcessBuilder pb = FerryProcess.builder(List.of(), "daemon", "--socket", socket.toString(), "--idle-exit", "0",
                "--warm-up", "0");
        // served commands draw progress: the clients' environment says so too
        pb.environment().put("FERRY_PROGRESS", "1");
        daemon = pb.redirectErrorStream(true).redirectOutput(log.toFile()).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!Files.exists(socket) || !Files.readString(log).contains("serving")) {
            assertTrue(daemon.isAlive(), "daemon exited: " + Files.readString(log));
            assertTrue(System.nanoTime() < deadline, "daemon did not start: " + Files.readString(log));
            Thread.sleep(50);
        }
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(socket.getParent())));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(socket)));
    }

    @AfterEach
    void stopDaemon() throws Exception {
        daemon.destroy();
        assertTrue(daemon.waitFor(30, TimeUnit.SECONDS));
        assertFalse(Files.exists(socket), "SIGTERM removes the socket");
    }

    /**
     * The two clients: {@link ThinClient} in a JVM, and {@code bin/ferry-daemon-client} on Python (what bin/ferry
     * prefers).
     */
    enum Client { JAVA, PYTHON }

    private Client kind = Client.JAVA;

    private ProcessBuilder client(Path cwd, Map<String, String> env, String... args) throws Exception {
        List<String> cmd = new ArrayList<>();
        if (kind == Client.JAVA) {
            cmd.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp", System.getProperty("java.class.path"), ThinClient.class.getName()));
        } else {
            Path script = Path.of("").toAbsolutePath();
            while (!Files.exists(script.resolve("bin/ferry-daemon-client"))) {
                script = script.getParent();
            }
            // Its first argument names the build as bin/ferry's jar does: here, the classes both JVMs load.
            cmd.addAll(List.of(PYTHON.toString(), "-SE", script.resolve("bin/ferry-daemon-client").toString(),
                    Path.of(ThinClient.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString()));
        }
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(cwd.toFile());
        pb.environment().put("FERRY_DAEMON_SOCKET", socket.toString());
        pb.environment().put("FERRY_PROGRESS", "1");
        pb.environment().putAll(env);
        return pb;
    }

    private FerryProcess.Result served(Path cwd, String... args) throws Exception {
        return FerryProcess.run(client(cwd, Map.of(), args));
    }

    /** The same command in a JVM of its own, in {@code cwd}. */
    private FerryProcess.Result own(Path cwd, String... args) throws Exception {
        ProcessBuilder pb = FerryProcess.builder(List.of(), args).directory(cwd.toFile());
        pb.environment().put("FERRY_PROGRESS", "1");
        return FerryProcess.run(pb);
    }

    /** Returns once {@code p}'s progress bar shows bytes moving; its stderr is drained from then on. */
    private static void underWay(Process p) throws Exception {
        BufferedReader err = new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8));
        StringBuilder seen = new StringBuilder();
        int c;
        while (!seen.toString().contains("MB/s") && (c = err.read()) >= 0) {
            seen.append((char) c);
        }
        assertTrue(seen.toString().contains("MB/s"), "no progress before the end: " + seen);
        Thread drain = new Thread(() -> {
            try (err) {
                err.transferTo(Writer.nullWriter());
            } catch (IOException e) {
                // the process ended
            }
        });
        drain.setDaemon(true);
        drain.start();
    }

    private static void image(Path dir, long bytes, long seed) throws Exception {
        Files.createDirectories(dir);
        byte[] b = new byte[(int) Math.min(bytes, 8 << 20)];
        SplittableRandom r = new SplittableRandom(seed);
        try (var out = Files.newOutputStream(dir.resolve("state"))) {
            for (long left = bytes; left > 0; left -= b.length) {
                for (int i = 0; i < b.length; i += 8) {
                    long v = r.nextInt(64); // compressible, but every blob its own
                    for (int k = 0; k < 8; k++) {
                        b[i + k] = (byte) (v >>> (k * 8) ^ r.nextInt(4));
                    }
                }
                out.write(b, 0, (int) Math.min(left, b.length));
            }
        }
        Files.writeString(dir.resolve("meta.txt"), "seed " + seed + "\n");
    }

    private static final Path PYTHON = Path.of("/usr/bin/python3");

    /**
     * Uses client {@code c}; a working directory {@code work} whose {@code img} holds {@code bytes} and a small file.
     */
    private Path work(Client c, long bytes, long seed) throws Exception {
        Assumptions.assumeTrue(c == Client.JAVA || Files.isExecutable(PYTHON),
                "no /usr/bin/python3 (apt-get install python3): bin/ferry uses the JVM client then");
        kind = c;
        Path work = Files.createDirectories(tmp.resolve("work"));
        image(work.resolve("img"), bytes, seed);
        return work;
    }

    @ParameterizedTest
    @EnumSource(Client.class)
    void aServedPushAndPullResolveTheClientsPathsAndAnswerAsTheCommandInItsOwnJvm(Client c) throws Exception {
        Path work = work(c, 3 << 20, 1);
        FerryProcess.Result push = served(work, "image", "push", "img", "--store", "st", "--job", "j", "--generation",
                "0",
                "--rank", "0", "--json");
        assertEquals(0, push.exit(), push.err());
        JsonNode pushed = new ObjectMapper().readTree(push.out());
        assertEquals((3 << 20) + 7, pushed.get("rawBytes").asLong());
        assertTrue(Files.isDirectory(work.resolve("st")),
                "the store is where the client meant, not in the daemon's directory");
        assertTrue(push.err().contains("MB/s"), "the push's progress reached the client: " + push.err());

        FerryProcess.Result pull = served(work, "image", "pull", "--store", "st", "--job", "j", "--generation", "0",
                "--rank", "0", "out");
        assertEquals(0, pull.exit(), pull.err());
        assertTrue(pull.out().startsWith("pulled j/0/0 into " + work.resolve("out")), pull.out());
        assertArrayEquals(Files.readAllBytes(work.resolve("img/state")), Files.readAllBytes(work.resolve("out/state")));
        assertTrue(pull.err().contains("has no commit marker"),
                "the warning went to the client's stderr: " + pull.err());

        // Failures: the same exit code and the same line on stderr as in a JVM of its own.
        for (String[] args : List.of(
                new String[] {"image", "pull", "--store", "st", "--job", "j", "--generation", "0", "--rank", "0",
                        "out"},
                new String[] {"image", "push", "img", "--store", "st", "--job", "../x", "--generation", "1", "--rank",
                        "0"},
                new String[] {"image", "push", "--store", "st", "--job", "j", "--generation", "1", "--rank", "0"})) {
            FerryProcess.Result s = served(work, args);
            FerryProcess.Result o = own(work, args);
            assertEquals(o.exit(), s.exit(), String.join(" ", args) + ": " + s.err());
            assertTrue(s.exit() == 1 || s.exit() == 2, s.err());
            assertEquals(o.err().lines().filter(l -> l.startsWith("ferry")).toList(),
                    s.err().lines().filter(l -> l.startsWith("ferry")).toList());
        }
        assertTrue(Files.readString(log).contains("serving"), Files.readString(log));
    }

    @ParameterizedTest
    @EnumSource(Client.class)
    void aClientTheDaemonMustNotServeIsDeclinedWithNothingDone(Client c) throws Exception {
        Path work = work(c, 64 << 10, 2);
        String[] push = {"image", "push", "img", "--store", "st", "--job", "j", "--generation", "0", "--rank", "0"};
        // Another environment (a setting the daemon would not apply), a command it does not run, log levels of its own.
        FerryProcess.Result env = FerryProcess.run(client(work, Map.of("FERRY_STAGING_WORKERS", "1"), push));
        assertEquals(ThinClient.NOT_SERVED, env.exit(), env.err());
        FerryProcess.Result verify = served(work, "store", "verify", "st");
        assertEquals(ThinClient.NOT_SERVED, verify.exit());
        FerryProcess.Result levels = served(work, "image", "push", "img", "--store", "st", "--job", "j", "--generation",
                "0",
                "--rank", "0", "--log-level", "debug");
        assertEquals(ThinClient.NOT_SERVED, levels.exit());
        assertFalse(Files.exists(work.resolve("st")), "a declined command did nothing");
        // A socket nobody serves: not served, nothing done.
        FerryProcess.Result none = FerryProcess.run(client(work,
                Map.of("FERRY_DAEMON_SOCKET", tmp.resolve("none.sock").toString()), push));
        assertEquals(ThinClient.NOT_SERVED, none.exit());
        assertFalse(Files.exists(work.resolve("st")));
        assertEquals(0, served(work, push).exit(), "the daemon serves on");

        // A second daemon on a live socket is refused; the first serves on.
        FerryProcess.Result second = FerryProcess.run(List.of(), "daemon", "--socket", socket.toString(), "--warm-up",
                "0");
        assertEquals(1, second.exit());
        assertTrue(second.err().contains("serves " + socket + " already"), second.err());
        // A socket directory others may write in is refused.
        Path open = Files.createDirectories(tmp.resolve("open"));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
        FerryProcess.Result loose = FerryProcess.run(List.of(), "daemon", "--socket", open.resolve("d.sock").toString(),
                "--warm-up", "0");
        assertEquals(1, loose.exit());
        assertTrue(loose.err().contains("writable by others"), loose.err());
        assertEquals(0, served(work, "image", "push", "img", "--store", "st", "--job", "j", "--generation", "1",
                "--rank", "0").exit());
    }

    @Test
    void anIdleDaemonExitsByItselfAndTakesItsSocketAlong() throws Exception {
        Path other = tmp.resolve("idle/d.sock");
        Process p = FerryProcess.builder(List.of(), "daemon", "--socket", other.toString(), "--idle-exit", "2s",
                "--warm-up", "1MiB").redirectErrorStream(true).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "still up after a minute idle");
        String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), said);
        // Its warm-up ran the commands as it serves them, every one of them to its end, and counts as none served.
        assertTrue(said.contains("warmed up (two images of 1.0 MiB pushed and pulled, three rounds"), said);
        // then it waited for the JIT's queue, at most 5 s
        assertTrue(said.matches("(?s).*; JIT settled in [0-5]\\.\\d s\\).*"), said);
        assertFalse(said.contains("warm-up stopped"), said);
        assertTrue(said.contains("stopped after 0 commands"), said);
        assertFalse(Files.exists(other));
    }

    @Test
    void aClientKilledMidPushHasItsPushInterruptedAndTheDaemonServesOn() throws Exception {
        Path work = Files.createDirectories(tmp.resolve("work"));
        image(work.resolve("big"), 512L << 20, 3);
        Process p = client(work, Map.of(), "image", "push", "big", "--store", "st", "--job", "j", "--generation", "0",
                "--rank", "0").redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        // Its progress says the push is under way; then the client dies as a Ctrl-C or a kill would end it.
        underWay(p);
        p.destroyForcibly();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!Files.readString(log).contains("went away; interrupting")) {
            assertTrue(System.nanoTime() < deadline, Files.readString(log));
            Thread.sleep(50);
        }
        // The interrupted command has ended in the daemon (its thread, which runs it to its end, is gone):
        // from here on nothing of that push can still write a manifest.
        deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (commandThreads() > 0) {
            assertTrue(System.nanoTime() < deadline, "the interrupted push never ended: " + Files.readString(log));
            Thread.sleep(50);
        }
        // No manifest was written: the image cannot be pulled, and the store verifies.
        FerryProcess.Result pull = own(work, "image", "pull", "--store", "st", "--job", "j", "--generation", "0",
                "--rank", "0", "out");
        assertEquals(1, pull.exit(), pull.out());
        assertFalse(Files.exists(work.resolve("out")));
        FerryProcess.Result verify = own(work, "store", "verify", "st");
        assertEquals(0, verify.exit(), verify.out() + verify.err());

        image(work.resolve("small"), 1 << 20, 4);
        FerryProcess.Result next = served(work, "image", "push", "small", "--store", "st", "--job", "j", "--generation",
                "1", "--rank", "0");
        assertEquals(0, next.exit(), next.err());
        assertTrue(daemon.isAlive());
    }

    /** The daemon's threads that run a client's command ({@code ferry-daemon-client}), as {@code jcmd} lists them. */
    private int commandThreads() throws Exception {
        Process j = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                Long.toString(daemon.pid()), "Thread.print").redirectErrorStream(true).start();
        String dump = new String(j.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(j.waitFor(60, TimeUnit.SECONDS) && j.exitValue() == 0 && dump.contains("\"main\""), dump);
        return (int) dump.lines().filter(l -> l.startsWith("\"ferry-daemon-client\"")).count();
    }

    /**
     * The store goes down mid-push and stays down until its circuit opens (the daemon's log says
     * so): with retries that outlast that ({@code store.retry.attempts} 100, 200 ms apart), no
     * call gives up first, so the push fails exactly as the same command in its own JVM does once
     * the circuit is open, whatever the timing: exit 1, "considered down", after retries shown.
     */
    @ParameterizedTest
    @EnumSource(Client.class)
    void aServedPushShowsItsStoresRetriesToItsClientAsInItsOwnJvm(Client c) throws Exception {
        kind = c;
        Path work = Files.createDirectories(tmp.resolve("work"));
        image(work.resolve("img"), 256L << 20, 8);
        try (S3ProxyServer s3 = new S3ProxyServer(tmp.resolve("s3")).bucket("ferry")) {
            List<String> args = new ArrayList<>(List.of("image", "push", "img", "--store", "s3://ferry/site", "--job",
                    "j",
                    "--generation", "0", "--rank", "0", "--set", "store.retry.attempts=100",
                    "--set", "store.retry.max-backoff=200ms"));
            s3.options().forEach((k, v) -> args.addAll(List.of("--set", k + "=" + v)));
            Process p = client(work, Map.of(), args.toArray(String[]::new))
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            StringBuffer err = new StringBuffer();
            Thread reader = new Thread(() -> {
                try (var in = new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8)) {
                    for (int ch; (ch = in.read()) >= 0; ) {
                        err.append((char) ch);
                    }
                } catch (IOException e) {
                    // the client ended
                }
            });
            reader.start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!err.toString().contains("MB/s")) { // under way: its packs go to s3proxy from now on
                assertTrue(p.isAlive() && System.nanoTime() < deadline, err.toString());
                Thread.sleep(10);
            }
            s3.stop(); // a real outage: connections refused until the store's circuit opens
            int logFrom = Files.readString(log).length();
            deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (!Files.readString(log).substring(logFrom).contains("circuit State transition from CLOSED to OPEN")) {
                assertTrue(p.isAlive() && System.nanoTime() < deadline,
                        err + "\nDAEMON LOG:\n" + Files.readString(log));
                Thread.sleep(10);
            }
            s3.start(); // back, but the circuit stays open (10 s): the push's next try fails at once
            assertTrue(p.waitFor(120, TimeUnit.SECONDS));
            reader.join();
            String said = err.toString();
            assertEquals(1, p.exitValue(),
                    said.substring(Math.max(0, said.length() - 3000)) + "\nDAEMON LOG:\n" + Files.readString(log));
            assertTrue(said.contains("ferry: store s3://ferry/site is considered down"),
                    said.substring(Math.max(0, said.length() - 3000)));
            // The retries show on the client's stderr, as a command in its own JVM prints them, and in the daemon's
            // log.
            assertTrue(err.toString().contains("failed, retrying in"), err.toString());
            assertTrue(Files.readString(log).contains("failed, retrying in"), Files.readString(log));
        }
    }

    @ParameterizedTest
    @EnumSource(Client.class)
    void aDaemonWhoseBuildWasReplacedDeclinesAndExits(Client c) throws Exception {
        Path work = work(c, 64 << 10, 5);
        image(work.resolve("big"), 256L << 20, 6);
        Process inFlight = client(work, Map.of(), "image", "push", "big", "--store", "big-st", "--job", "j",
                "--generation", "0",
                "--rank", "0").redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        underWay(inFlight);
        // What the client calls its build: where its classes are and when they changed. A rebuild changes that time.
        Path classes = Path.of(ThinClient.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        FileTime before = Files.getLastModifiedTime(classes);
        try {
            Files.setLastModifiedTime(classes, FileTime.fromMillis(before.toMillis() + 60_000));
            FerryProcess.Result r = served(work, "image", "push", "img", "--store", "st", "--job", "j", "--generation",
                    "0", "--rank", "0");
            assertEquals(ThinClient.NOT_SERVED, r.exit(), r.err());
        } finally {
            Files.setLastModifiedTime(classes, before);
        }
        // The push under way when the daemon learnt it was stale ends as it would have: the daemon waits for it.
        assertTrue(inFlight.waitFor(120, TimeUnit.SECONDS));
        assertEquals(0, inFlight.exitValue());
        assertEquals(0, own(work, "image", "pull", "--store", "big-st", "--job", "j", "--generation", "0", "--rank",
                "0", "back").exit());
        assertEquals(-1, Files.mismatch(work.resolve("big/state"), work.resolve("back/state")));
        assertTrue(daemon.waitFor(30, TimeUnit.SECONDS), "a stale daemon exits");
        assertTrue(Files.readString(log).contains("the distribution was rebuilt"), Files.readString(log));
        assertFalse(Files.exists(work.resolve("st")));
    }
}
