package io.ferry.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code ferry coordinator} listening beyond loopback requires SASL: refused without a users
 * file; with one, an agent and {@code ferry run --kafka} log in with the {@code kafka.*}
 * settings of their configuration, an agent with a wrong password is refused, the agents make
 * partner copies proving the peer secret, and the ranks see none of the log's credentials.
 */
class KafkaAuthIT {
    @TempDir
    Path tmp;
    private static final int STEPS = 250;
    private final List<Process> started = new ArrayList<>();

    @Test
    void aCoordinatorBeyondLoopbackWithoutUsersRefusesToStartNamingTheKey() throws Exception {
        Path empty = Files.writeString(tmp.resolve("empty.conf"), "# nothing\n");
        ProcessBuilder pb = FerryProcess.builder(List.of("-Xmx256m"), "coordinator", "--home",
                tmp.resolve("c").toString(),
                "--listen", "0.0.0.0:" + TestBed.freePort(), "--http", "off");
        pb.environment().put(Configuration.FILE_VARIABLE, empty.toString());
        Process p = pb.redirectErrorStream(true).start();
        started.add(p);
        String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(2, TimeUnit.MINUTES), out);
        assertNotEquals(0, p.exitValue(), out);
        assertTrue(out.contains("is beyond loopback") && out.contains("set kafka.embedded.users-file=PATH"), out);
        assertFalse(Files.exists(tmp.resolve("c").resolve("kafka").resolve("meta.properties")), "no broker started");
    }

    @Test
    void anAgentServingPeersBeyondLoopbackWithoutTheSecretRefusesToStartNamingTheKey() throws Exception {
        Path empty = Files.writeString(tmp.resolve("empty.conf"), "# nothing\n");
        // a documentation address (RFC 5737): refused before anything binds or connects
        ProcessBuilder pb = FerryProcess.builder(List.of("-Xmx256m"), "agent", "--kafka", "127.0.0.1:9", "--node", "n9",
                "--home", tmp.resolve("n9").toString(), "--peer-listen", "192.0.2.77:0");
        pb.environment().put(Configuration.FILE_VARIABLE, empty.toString());
        Process p = pb.redirectErrorStream(true).start();
        started.add(p);
        String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(2, TimeUnit.MINUTES), out);
        assertNotEquals(0, p.exitValue(), out);
        assertTrue(out.contains("is beyond loopback") && out.contains("set peer.secret-file=PATH"), out);
    }

    @Test
    void agentsAndRunLogInWithTheirConfigurationAndRanksSeeNoCredential() throws Exception {
        KafkaLogin login = KafkaLogin.create(tmp.resolve("site"));
        String listen = "0.0.0.0:" + TestBed.freePort();
        try {
            Lines coordinator = start(login.applyTo(FerryProcess.builder(List.of("-Xmx512m"), "coordinator", "--home",
                    tmp.resolve("coord").toString(), "--listen", listen, "--http", "off")));
            String ready = coordinator.await("the coordinator", l -> l.startsWith("ferry coordinator: serving jobs"));
            assertTrue(ready.contains("SASL/PLAIN, SASL_PLAINTEXT"), ready);
            String kafka = ready.replaceAll(".*--kafka (\\S+) .*", "$1");

            // A wrong password: refused at once, with the broker's reason.
            Path wrong = Files.writeString(tmp.resolve("wrong.conf"), "kafka.security.protocol = SASL_PLAINTEXT\n"
                    + "kafka.sasl.mechanism = PLAIN\nkafka.sasl.jaas.config = " + KafkaLogin.jaas("agent", "not-it")
                    + "\n");
            ProcessBuilder bad = FerryProcess.builder(List.of("-Xmx256m"), "agent", "--kafka", kafka, "--node", "bad",
                    "--home", tmp.resolve("bad").toString());
            bad.environment().put(Configuration.FILE_VARIABLE, wrong.toString());
            Process b = bad.redirectErrorStream(true).start();
            started.add(b);
            String badOut = new String(b.getInputStream().readAllBytes());
            assertTrue(b.waitFor(2, TimeUnit.MINUTES), badOut);
            assertNotEquals(0, b.exitValue(), badOut);
            assertTrue(badOut.contains("refused Ferry") && badOut.contains("Authentication failed"), badOut);
            assertFalse(badOut.contains("not-it"), "the password is not printed: " + badOut);

            // Two agents, their login from the environment this time (FERRY_KAFKA_SASL_JAAS_CONFIG over the file's);
            // their peer servers require the file's peer.secret-file, which their partner copies prove.
            for (String n : List.of("n0", "n1")) {
                ProcessBuilder agent = login.applyTo(FerryProcess.builder(List.of("-Xmx256m"), "agent", "--kafka",
                        kafka,
                        "--node", n, "--home", tmp.resolve(n).toString(), "--heartbeat", "1s"));
                agent.environment()
                        .put("FERRY_KAFKA_SASL_JAAS_CONFIG", KafkaLogin.jaas(login.user(), login.password()));
                start(agent).await("agent " + n, l -> l.startsWith("ferry agent " + n));
            }
            // A second agent under n1's name, on another home: refused, naming the agent that holds the name.
            Process twin = login.applyTo(FerryProcess.builder(List.of("-Xmx256m"), "agent", "--kafka", kafka, "--node",
                    "n1", "--home", tmp.resolve("n1-twin").toString(), "--heartbeat", "1s")).redirectErrorStream(true)
                            .start();
            started.add(twin);
            String twinOut = new String(twin.getInputStream().readAllBytes());
            assertTrue(twin.waitFor(2, TimeUnit.MINUTES), twinOut);
            assertNotEquals(0, twin.exitValue(), twinOut);
            assertTrue(twinOut.contains("node name n1 is taken") && twinOut.contains(tmp.resolve("n1").toString()),
                    twinOut);

            Path results = Files.createDirectories(tmp.resolve("results"));
            Path script = LcgRank.script(tmp, STEPS);
            Process run = login.applyTo(FerryProcess.builder(List.of("-Xmx256m"), "run", "--kafka", kafka, "--job",
                    "auth",
                    "--ranks", "2", "--nodes", "n0,n1", "--interval", "1s", "--partner", "--http", "off",
                    "--store", tmp.resolve("store").toString(), "--", "bash", "-c",
                    "env > \"$0/env-$FERRY_RANK\"; exec " + script + " \"$0\"", results.toString()))
                            .redirectErrorStream(true).start();
            started.add(run);
            String runOut = new String(run.getInputStream().readAllBytes());
            assertTrue(run.waitFor(3, TimeUnit.MINUTES), runOut);
            assertEquals(0, run.exitValue(), runOut);
            assertTrue(runOut.contains("job finished: every rank exited 0"), runOut);
            assertTrue(runOut.matches("(?s).*generation \\d+: n\\d's images of ranks \\S+ copied into n\\d's cache.*"),
                    "partner copies between agents proving the peer secret: " + runOut);
            for (int r = 0; r < 2; r++) {
                assertEquals(Long.toString(LcgRank.uninterrupted(r, STEPS)),
                        Files.readString(results.resolve("rank-" + r)).trim());
                String env = Files.readString(results.resolve("env-" + r));
                assertTrue(env.contains("FERRY_RANK=" + r), env);
                assertFalse(env.contains("FERRY_KAFKA_"), "the log's login reached a rank: " + env);
                assertFalse(env.contains(login.password()), "the log's password reached a rank: " + env);
            }
        } finally {
            for (Process p : started) {
                p.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
        }
    }

    private Lines start(ProcessBuilder pb) throws IOException {
        Process p = pb.redirectErrorStream(true).start();
        started.add(p);
        return new Lines(p, "p" + started.size());
    }
}
