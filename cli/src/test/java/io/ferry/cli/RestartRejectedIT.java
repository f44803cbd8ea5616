package io.ferry.cli;

import io.ferry.agent.Quiesce;
import io.ferry.coordinator.GenerationView;
import io.ferry.coordinator.JobView;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A rank whose own check of its restart data fails says so (RESTART_FAIL, SCR's
 * Complete_restart(valid=0)): every rank rolls back to the next older established generation,
 * the rejected one is marked unusable and never chosen again, and the job still ends with
 * the result of an uninterrupted run. Real ranks (JVMs speaking the socket protocol), the
 * real one-node system (broker, coordinator, agent) in this process.
 */
class RestartRejectedIT {
    private static final long TARGET = 400;

    @TempDir
    Path tmp;

    @Test
    void aRankRejectingItsRestartDataRollsEveryRankBackToTheGenerationBefore() throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("ranks"));
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> program = List.of(java, "-Xmx64m", "-cp", System.getProperty("java.class.path"),
                RejectingRank.class.getName(), Long.toString(TARGET), "50", dir.toString());
        FerryHome home = new FerryHome(tmp.resolve("home"));
        JobRunner.Spec spec = new JobRunner.Spec("reject", 2, Duration.ofMillis(1500), true, home.store().toString(),
                home,
                KafkaAccess.EMBEDDED, HttpOptions.at("off"), null, null,
                new JobRunner.Program(program, Quiesce.app(Duration.ofSeconds(30),
                "USR2"), Map.of()));
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        try (JobRunner runner = new JobRunner(spec);
             PrintStream out = new PrintStream(new OutputStream() { // kept, and echoed for the test's log
                 @Override
                 public void write(int b) {
                     printed.write(b);
                     System.out.write(b);
                 }
             }, true, StandardCharsets.UTF_8)) {
            runner.start(out);
            long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
            while (runner.view().map(v -> v.generations().stream()
                    .filter(g -> g.state() == GenerationView.State.ESTABLISHED).count()).orElse(0L) < 3) {
                assertTrue(System.nanoTime() < deadline, "3 snapshots established in time: " + printed);
                Thread.sleep(50);
            }
            runner.agent().orElseThrow().ranks().get(1).process().destroyForcibly();
            assertTrue(runner.awaitFinish(), printed.toString(StandardCharsets.UTF_8));
            JobView v = runner.view().orElseThrow();
            long rejected = Long.parseLong(Files.readString(dir.resolve("rejected")).trim());
            GenerationView bad = v.generations().stream().filter(g -> g.generation() == rejected).findFirst()
                    .orElseThrow();
            assertTrue(bad.problem().contains("rank 0 rejected its restart data: checksum"), bad.problem());
            assertEquals(2, v.recoveries(), "the kill's rollback, then the one the rejection caused");
            String text = printed.toString(StandardCharsets.UTF_8);
            assertTrue(text.lines()
                    .anyMatch(l -> l.contains("roll back to generation") && l.contains("rejected its restart data")
                    && !l.contains("generation " + rejected + " (")), text);
        }
        for (int r = 0; r < 2; r++) {
            assertEquals(Long.toString(TARGET), Files.readString(dir.resolve("result." + r)).trim(), "rank " + r);
        }
    }
}
