package io.ferry.cli;

import io.ferry.agent.capture.Capturers;
import io.ferry.agent.capture.DmtcpSpan;
import io.ferry.staging.internal.FileTrees;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Transparent checkpoints across nodes, with the real tools: a `ferry coordinator`, three
 * `ferry agent`s, each on its own test host (a network namespace, and a mount namespace that
 * gives each its own home at the one path every agent uses; skipped where namespaces are
 * refused), and `ferry run --kafka --nodes --capture dmtcp|criu --partner --auto-recover` of
 * three ranks of an unmodified C program, one per node: {@code appender} (threads, a 16 MiB
 * heap, a file each appends to) under DMTCP and under CRIU, and {@code ring} under DMTCP, whose
 * ranks pass a message round over TCP between the hosts every step (each file depends on every
 * message), which needs the DMTCP of {@code tools/build-dmtcp.sh}. Under DMTCP every rank is in
 * the job's one DMTCP computation (its coordinator run by n0's agent, rank 0's). Once a
 * generation is established and n1's images are copied into a partner's cache, node n1 is lost
 * (its agent and its rank killed, its cache removed): n1's rank comes back on another node from
 * the partner copy (under DMTCP every rank restored into one fresh computation, the ring's
 * connections rewired to the moved rank's new host; under CRIU the moved process tree restored
 * on a host it never ran on), checkpoints go on, and every rank's file ends as an uninterrupted
 * run's. Skipped, saying why, where the tool is missing.
 */
class TransparentClusterIT {
    private static final int RANKS = 3;
    private static final int STEPS = 600; // 15 s at least (25 ms a step); hurried once the move is seen

    @TempDir
    Path tmp;
    private final List<Process> started = new ArrayList<>();
    private KafkaLogin login;

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"dmtcp, appender", "dmtcp, ring", "criu, appender"})
    @Timeout(value = 6, unit = TimeUnit.MINUTES)
    void aLostNodesRankComesBackOnAnotherNodeFromItsPartnerCopy(String method, String program) throws Exception {
        Optional<String> why = Capturers.of(method).unavailable();
        why.ifPresent(w -> System.err.println("SKIPPED TransparentClusterIT " + method + ": " + w
                + "; ../shared/tools/install-checkpointers.sh builds it"));
        assumeTrue(why.isEmpty(), () -> method + " unavailable: " + why.orElse(""));
        boolean ring = program.equals("ring");
        if (ring && !DmtcpSpan.crossHostSockets()) {
            System.err.println("SKIPPED TransparentClusterIT ring: the DMTCP on PATH lacks the patch for sockets across"
                    + " hosts; tools/build-dmtcp.sh builds it (as .ci/run does)");
        }
        assumeTrue(!ring || DmtcpSpan.crossHostSockets(),
                "the DMTCP on PATH lacks the patch for sockets across hosts (tools/build-dmtcp.sh)");
        Path bin = ScenarioPrograms.compile(tmp, program);
        List<String> reference = ScenarioPrograms.references(bin, tmp, STEPS, ring ? RANKS : 1);
        try (TestBed bed = TestBed.create(3)) {
            System.out.println("TransparentClusterIT: " + (bed.namespaces() ? "3 test hosts in network namespaces"
                    : "agents as separate processes on loopback (" + bed.fallbackReason() + ")"));
            String kafka = bed.serviceAddress() + ":" + TestBed.freePort();
            login = KafkaLogin.create(tmp.resolve("site"));
            Lines coordinator = start(FerryProcess.builder(List.of("-Xmx512m"), "coordinator", "--home",
                    tmp.resolve("coord").toString(), "--listen", kafka, "--http", "off", "--heartbeat-timeout", "5s"));
            coordinator.await("the coordinator", l -> l.startsWith("ferry coordinator: serving jobs"));
            List<Lines> agents = new ArrayList<>();
            // Every node's agent has its home at one path, as on a cluster (DMTCP records where it saved a rank's
            // open files, and the moved rank's restore reads them there): each test host sees its own directory
            // there, bound over it in a mount namespace of its own.
            assumeTrue(bed.namespaces(), "no network namespaces (needs root and iproute2): the test hosts need mount"
                    + " namespaces too, to give every agent its home at the same path");
            Path home = Files.createDirectories(tmp.resolve("home"));
            for (int i = 0; i < 3; i++) {
                List<String> cmd = new ArrayList<>(List.of("unshare", "--mount", "--propagation", "private", "sh", "-c",
                        "mount --bind \"$1\" \"$2\" && shift 2 && exec \"$@\"", "sh",
                        Files.createDirectories(tmp.resolve("n" + i)).toString(), home.toString()));
                cmd.addAll(FerryProcess.builder(List.of("-Xmx256m"), "agent", "--kafka", kafka, "--node", "n" + i,
                        "--home", home.toString(), "--heartbeat", "1s").command());
                agents.add(start(bed.onHost(i, cmd)));
            }
            for (int i = 0; i < 3; i++) {
                agents.get(i).await("agent n" + i, l -> l.startsWith("ferry agent n"));
            }
            // ring: rank r listens on port P + r of its host and connects to the next rank's host.
            String hosts = String.join(",", bed.hostAddress(0), bed.hostAddress(1), bed.hostAddress(2));
            String ringArgs = ring ? " " + TestBed.freePorts(RANKS) : "";
            Lines run = start(FerryProcess.builder(List.of("-Xmx256m"), "run", "--kafka", kafka, "--job", "dmwide",
                    "--ranks", Integer.toString(RANKS), "--nodes", "n0,n1,n2", "--interval", "2s", "--auto-recover",
                    "--partner", "--capture", method, "--store", tmp.resolve("store").toString(), "--", "bash", "-c",
                    ScenarioPrograms.hurryAssignment(tmp) + (ring ? "RING_HOSTS=" + hosts + " " : "") + "exec " + bin
                            + " " + tmp + "/out.$FERRY_RANK.txt " + STEPS + " 25" + ringArgs));
            run.await("generation 1 established", l -> l.contains("generation 1 established"));
            // One computation for the job: one dmtcp_coordinator, run by rank 0's agent (n0's); none on n1 or n2.
            for (int i = 0; i < 3 && method.equals("dmtcp"); i++) {
                long coordinators = started.get(1 + i).descendants().filter(h -> h.info().command()
                        .map(c -> c.endsWith("/dmtcp_coordinator")).orElse(false)).count();
                assertEquals(i == 0 ? 1 : 0, coordinators, "DMTCP coordinators under n" + i + "'s agent");
            }
            String copied = run.await("n1's partner copy of generation 1",
                    l -> l.matches(".*generation 1: n1's images of ranks? 1 copied into n[02]'s cache.*"));
            String partner = copied.replaceAll(".*copied into (n[02])'s cache.*", "$1");

            // Node n1 is lost: its agent and its rank die, its cache is gone.
            ProcessHandle n1 = started.get(2).toHandle();
            n1.descendants().forEach(ProcessHandle::destroyForcibly);
            n1.destroyForcibly();
            FileTrees.delete(tmp.resolve("n1").resolve("cache"));
            run.await("n1's rank moved", l -> l.contains("ranks placed anew: node n1 lost"));
            String moved = run.await("n1's rank restored elsewhere",
                    l -> l.matches(".*node n[02] restored generation.*") && l.contains("1="));
            assertTrue(moved.contains("node " + partner) && moved.contains("1=partner"),
                    "n1's rank comes from the partner copy on " + partner + ": " + moved);
            long g = Lines.generationOf(moved);
            run.await("a generation established after the move", l -> l.contains(" established on the ")
                    && Lines.generationOf(l) > g);
            LcgRank.hurry(tmp); // the rest of the job only waits for its end

            Process runProcess = started.get(started.size() - 1);
            assertTrue(runProcess.waitFor(4, TimeUnit.MINUTES), "ferry run did not finish: " + run.lines);
            assertEquals(0, runProcess.exitValue(), String.join("\n", run.lines));
            for (int r = 0; r < RANKS; r++) {
                ScenarioPrograms.assertSameFile(reference.get(r % reference.size()), tmp.resolve("out." + r + ".txt"),
                        "rank " + r + "'s file (" + method + " " + program + ")", run.lines);
            }
        } finally {
            for (Process p : started) {
                p.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
        }
    }

    private Lines start(ProcessBuilder pb) throws IOException {
        Process p = login.applyTo(pb).redirectErrorStream(true).start();
        started.add(p);
        return new Lines(p, "p" + started.size());
    }
}
