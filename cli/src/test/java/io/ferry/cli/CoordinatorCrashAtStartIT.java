package io.ferry.cli;

import io.ferry.agent.capture.Capturers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A coordinator that dies between logging a job's start (where its ranks run) and sending the launches, as SIGKILL
 * would (its crash point {@code coordinator.start-placed}), and is started again on its home, as systemd would.
 * Real processes: the coordinator with its embedded broker, two agents on loopback, and {@code ferry run --capture
 * dmtcp --nodes n0,n1} of two ranks of an unmodified C program ({@code appender}) in the job's one DMTCP computation,
 * led by n0's agent. The nodes never got their launches and send no heartbeat of the job: the next coordinator sends
 * the launches again instead of taking a node for lost (which moved a rank off a live node, and without {@code
 * --auto-recover} failed the job); checkpoints follow, and each rank's file ends as an uninterrupted run's. Skipped,
 * saying why, where DMTCP is missing.
 */
class CoordinatorCrashAtStartIT {
    /** At least 10 s of work (25 ms a step), hurried once a generation is established after the restart. */
    private static final int STEPS = 400;

    @TempDir
    Path tmp;
    private final Children children = new Children();

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void theNextCoordinatorSendsTheLaunchesTheDeadOneNeverSent() throws Exception {
        Optional<String> why = Capturers.of("dmtcp").unavailable();
        why.ifPresent(w -> System.err.println("SKIPPED CoordinatorCrashAtStartIT: " + w
                + "; ../shared/tools/install-checkpointers.sh builds it"));
        assumeTrue(why.isEmpty(), () -> "dmtcp unavailable: " + why.orElse(""));
        Path bin = ScenarioPrograms.compile(tmp, "appender");
        String reference = ScenarioPrograms.references(bin, tmp, STEPS, 1).get(0);
        try {
            String kafka = "127.0.0.1:" + TestBed.freePort();
            Path home = tmp.resolve("coord");
            Lines first = children.start(FerryProcess.builder(
                    List.of("-Xmx384m", "-Dferry.crash-at=coordinator.start-placed"), "coordinator", "--home",
                    home.toString(), "--listen", kafka, "--http", "off", "--heartbeat-timeout", "6s"));
            Process firstProcess = children.last();
            first.await("the coordinator", l -> l.startsWith("ferry coordinator: serving jobs"));
            List<Lines> agents = new ArrayList<>();
            for (String node : List.of("n0", "n1")) { // with peer ports: n0's agent leads the DMTCP computation
                agents.add(children.start(FerryProcess.builder(List.of("-Xmx256m"), "agent", "--kafka", kafka, "--node", node,
                        "--home", tmp.resolve(node).toString(), "--heartbeat", "1s")));
            }
            for (Lines agent : agents) {
                agent.await("an agent", l -> l.startsWith("ferry agent n"));
            }
            Lines run = children.start(FerryProcess.builder(List.of("-Xmx256m"), "run", "--kafka", kafka, "--job", "crashstart",
                    "--ranks", "2", "--nodes", "n0,n1", "--interval", "2s", "--auto-recover", "--capture", "dmtcp",
                    "--store", tmp.resolve("store").toString(), "--", "bash", "-c",
                    ScenarioPrograms.hurryAssignment(tmp) + "exec " + bin + " " + tmp + "/out.$FERRY_RANK.txt " + STEPS
                            + " 25"));
            Process runProcess = children.last();

            assertTrue(firstProcess.waitFor(2, TimeUnit.MINUTES), "the crash point was never reached: " + first.lines);
            assertEquals(137, firstProcess.exitValue(), String.join("\n", first.lines));
            first.await("the crash point", l -> l.contains("crash point coordinator.start-placed@1 reached"));
            Lines second = children.coordinator(home, kafka, "--heartbeat-timeout", "6s");
            second.await("the launches sent again",
                    l -> l.contains("never answered the start placed by the coordinator before this one"));
            run.await("a generation established", l -> l.matches(".*generation \\d+ established on.*"));
            LcgRank.hurry(tmp); // the rest of the job only waits for its end

            assertTrue(runProcess.waitFor(4, TimeUnit.MINUTES), "ferry run did not finish: " + run.lines);
            assertEquals(0, runProcess.exitValue(), String.join("\n", run.lines));
            assertTrue(run.lines.stream().noneMatch(l -> l.contains("ranks placed anew") || l.contains("recovering")),
                    "no node taken for lost, no rollback: " + run.lines);
            for (int r = 0; r < 2; r++) {
                ScenarioPrograms.assertSameFile(reference, tmp.resolve("out." + r + ".txt"), "rank " + r + "'s file",
                        run.lines);
            }
        } finally {
            children.stopAll();
        }
    }
}
