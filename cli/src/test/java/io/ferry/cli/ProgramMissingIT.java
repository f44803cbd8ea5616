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
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A restart that fails for a reason that is not the snapshot's (here the job's program is gone
 * from the node when its ranks are relaunched, as when a shared file system is away) does not
 * set the snapshot aside: the coordinator tries the same generation again after its backoff,
 * and once the program is back the job resumes from its newest snapshot and ends with the
 * result of an uninterrupted run. Before, any launch error marked the generation unusable and
 * the job fell back, generation by generation. The real one-node system (broker, coordinator,
 * agent) in this process; real signal-mode ranks; the program really absent (renamed away).
 */
class ProgramMissingIT {
    private static final int STEPS = 500;

    @TempDir
    Path tmp;

    @Test
    void aProgramMissingAtRelaunchIsTriedAgainFromTheSameSnapshotNotSetAside() throws Exception {
        Path bin = Files.createDirectories(tmp.resolve("bin"));
        Path script = LcgRank.script(bin, STEPS);
        Path away = bin.resolve("rank.sh.away");
        Path results = Files.createDirectories(tmp.resolve("results"));
        FerryHome home = new FerryHome(tmp.resolve("home"));
        JobRunner.Spec spec = new JobRunner.Spec("gone", 2, Duration.ofMillis(1500), true, home.store().toString(),
                home, KafkaAccess.EMBEDDED, HttpOptions.at("off"), null, null, new JobRunner.Program(
                List.of(script.toString(), results.toString()),
                Quiesce.app(Duration.ofSeconds(30), "USR2"), Map.of("recovery.backoff", "4s")));
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        try (JobRunner runner = new JobRunner(spec);
             PrintStream out = new PrintStream(new OutputStream() { // kept, and echoed for the test's log
                 @Override
                 public synchronized void write(int b) {
                     printed.write(b);
                     System.out.write(b);
                 }
             }, true, StandardCharsets.UTF_8)) {
            runner.start(out);
            await("2 snapshots established", printed, () -> runner.view().map(v -> v.generations().stream()
                    .filter(g -> g.state() == GenerationView.State.ESTABLISHED).count()).orElse(0L) >= 2);
            Files.move(script, away);
            runner.agent().orElseThrow().ranks().get(1).process().destroyForcibly();
            Pattern absent = Pattern.compile(
                    "cannot launch the ranks of generation (\\d+): .*(No such file|error=2).*\n");
            await("the relaunch failing for the program's absence", printed,
                    () -> absent.matcher(text(printed)).find());
            Matcher failed = absent.matcher(text(printed));
            assertTrue(failed.find());
            long g = Long.parseLong(failed.group(1));
            Files.move(away, script); // the file system is back
            LcgRank.hurry(results); // what follows the relaunch only waits for the end
            assertTrue(runner.awaitFinish(), text(printed));

            JobView v = runner.view().orElseThrow();
            GenerationView kept = v.generations().stream().filter(x -> x.generation() == g).findFirst().orElseThrow();
            assertEquals("", kept.problem(), "generation " + g + " is not set aside");
            Matcher restored = Pattern.compile("restored generation (\\d+)").matcher(text(printed));
            long last = -1;
            while (restored.find()) {
                last = Long.parseLong(restored.group(1));
            }
            assertEquals(g, last, "the job resumed from the same snapshot: " + text(printed));
        }
        for (int r = 0; r < 2; r++) {
            assertEquals(Long.toString(LcgRank.uninterrupted(r, STEPS)),
                    Files.readString(results.resolve("rank-" + r)).trim(),
                    "rank " + r);
        }
    }

    private static String text(ByteArrayOutputStream printed) {
        synchronized (printed) {
            return printed.toString(StandardCharsets.UTF_8);
        }
    }

    private static void await(String what, ByteArrayOutputStream printed, BooleanSupplier cond)
            throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        while (!cond.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, what + " in time: " + text(printed));
            Thread.sleep(50);
        }
    }
}
