package io.ferry.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Jobs have owners through the README's commands: `ferry coordinator` with a users file naming
 * operators (the agents' login), an agent logged in as the operator, and two users. alice's
 * `ferry run` runs her job to its end; bob's `ferry run` of the same job is refused at once,
 * saying whose it is, and his `ferry halt` of it is refused by the coordinator, so her job ends
 * exact and unhalted. Real processes, a real broker with Kafka's ACLs.
 */
class JobOwnersRunIT {
    private static final int STEPS = 500;

    @TempDir
    Path tmp;
    private final List<Process> started = new ArrayList<>();

    @Test
    void aUserCannotRunOrHaltAnotherUsersJob() throws Exception {
        Path users = Files.writeString(tmp.resolve("users"), "agents:agents-pw-1\nalice:alice-pw-22\nbob:bob-pw-333\n");
        Files.setPosixFilePermissions(users, PosixFilePermissions.fromString("rw-------"));
        Path service = config("service.conf", "kafka.embedded.users-file = " + users + "\n"
                + "kafka.embedded.operators = agents\n" + login("agents", "agents-pw-1"));
        Path alice = config("alice.conf", login("alice", "alice-pw-22"));
        Path bob = config("bob.conf", login("bob", "bob-pw-333"));
        try {
            Lines coordinator = start(with(service, FerryProcess.builder(List.of("-Xmx512m"), "coordinator", "--home",
                    tmp.resolve("coord").toString(), "--listen", "127.0.0.1:" + TestBed.freePort(), "--http", "off")));
            String ready = coordinator.await("the coordinator", l -> l.startsWith("ferry coordinator: serving jobs"));
            String kafka = ready.replaceAll(".*--kafka (\\S+) .*", "$1");
            String owners = coordinator.await("the owners line",
                    l -> l.startsWith("ferry coordinator: jobs have owners"));
            assertTrue(owners.contains("[agents]") && owners.contains("[alice, bob]"), owners);
            start(with(service, FerryProcess.builder(List.of("-Xmx256m"), "agent", "--kafka", kafka, "--node", "n0",
                    "--home", tmp.resolve("n0").toString(), "--heartbeat", "1s"))).await("agent n0",
                    l -> l.startsWith("ferry agent n0"));

            Path results = Files.createDirectories(tmp.resolve("results"));
            Path script = LcgRank.script(tmp, STEPS);
            Process run = runAs(alice, kafka, script, results);
            started.add(run);
            Lines runOut = new Lines(run, "alice");
            runOut.await("alice's job running", l -> l.contains("generation 1"));

            Process theirs = runAs(bob, kafka, script, results);
            started.add(theirs);
            String bobsRun = new String(theirs.getInputStream().readAllBytes());
            assertTrue(theirs.waitFor(2, TimeUnit.MINUTES), bobsRun);
            assertNotEquals(0, theirs.exitValue(), bobsRun);
            assertTrue(bobsRun.contains("job hers belongs to login alice: login bob may not control it"), bobsRun);

            Process halt = with(bob, FerryProcess.builder(List.of("-Xmx256m"), "halt", "hers", "--kafka", kafka))
                    .redirectErrorStream(true).start();
            started.add(halt);
            String bobsHalt = new String(halt.getInputStream().readAllBytes());
            assertTrue(halt.waitFor(2, TimeUnit.MINUTES), bobsHalt);
            coordinator.await("bob's halt refused", l -> l.contains("refused Halt: job hers belongs to login alice"));
            LcgRank.hurry(results); // the rest of alice's job only waits for its end

            assertTrue(run.waitFor(3, TimeUnit.MINUTES), String.join("\n", runOut.lines));
            runOut.awaitEnd();
            assertEquals(0, run.exitValue(), String.join("\n", runOut.lines));
            assertTrue(runOut.lines.stream().anyMatch(l -> l.contains("job finished: every rank exited 0")),
                    "alice's job ran to its end, not halted: " + runOut.lines);
            for (int r = 0; r < 2; r++) {
                assertEquals(Long.toString(LcgRank.uninterrupted(r, STEPS)),
                        Files.readString(results.resolve("rank-" + r)).trim());
            }
        } finally {
            for (Process p : started) {
                p.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
        }
    }

    /** `ferry run` of job "hers" (2 ranks on n0) with the login of {@code config}. */
    private Process runAs(Path config, String kafka, Path script, Path results) throws IOException {
        return with(config, FerryProcess.builder(List.of("-Xmx256m"), "run", "--kafka", kafka, "--job", "hers",
                "--ranks", "2", "--nodes", "n0", "--interval", "1s", "--http", "off",
                "--store", tmp.resolve("store").toString(), "--", script.toString(), results.toString()))
                .redirectErrorStream(true).start();
    }

    private static String login(String user, String password) {
        return "kafka.security.protocol = SASL_PLAINTEXT\nkafka.sasl.mechanism = PLAIN\nkafka.sasl.jaas.config = "
                + KafkaLogin.jaas(user, password) + "\n";
    }

    private Path config(String name, String text) throws IOException {
        Path p = Files.writeString(tmp.resolve(name), text);
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rw-------"));
        return p;
    }

    private static ProcessBuilder with(Path config, ProcessBuilder pb) {
        pb.environment().put(Configuration.FILE_VARIABLE, config.toString());
        return pb;
    }

    private Lines start(ProcessBuilder pb) throws IOException {
        Process p = pb.redirectErrorStream(true).start();
        started.add(p);
        return new Lines(p, "p" + started.size());
    }
}
