package io.ferry.cli;

import io.ferry.coordinator.GenerationView;
import io.ferry.coordinator.JobView;
import io.ferry.coordinator.predict.ForecastErrors;
import io.ferry.eventlog.EmbeddedKafka;
import io.ferry.eventlog.KafkaLog;
import io.ferry.model.Event;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code ferry plan --accuracy J --refit} on a real broker: the nodes' staging reports live on the
 * heartbeats topic, apart from the job's history, and the refit folds them in among its events by log
 * time, so it knows when each generation passed a quarter of its bytes read and forecasts it again
 * from there. The job's events are appended here as a coordinator and its agents would log them (no
 * coordinator runs, so the last generation's forecasts are this test's, standing for an older model's).
 */
class AccuracyRefitIT {
    private static final long MIB = 1L << 20;
    private static final String JOB = "refit";

    @TempDir
    Path tmp;

    @Test
    void theRefitKnowsWhenEachGenerationPassedAQuarterReadFromTheHeartbeatsTopic() throws Exception {
        long raw = 64 * MIB;
        try (EmbeddedKafka broker = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(broker.bootstrapServers())) {
            log.append(new Event.JobStarted(JOB, 2, 0, false, "file:/s", "n0"));
            long[] toQuarterMillis = {150, 350, 200, 300, 250};
            for (int g = 0; g < toQuarterMillis.length; g++) {
                long requested = System.currentTimeMillis();
                log.append(new Event.CheckpointRequested(JOB, g, "interval"));
                log.append(new Event.ImageCaptured(JOB, g, 0, "n0", raw / 2, 0.01, -1));
                log.append(new Event.ImageCaptured(JOB, g, 1, "n0", raw / 2, 0.01, -1));
                if (g == toQuarterMillis.length - 1) { // forecast at capture, then at a quarter (below)
                    log.append(new Event.PredictionMade(JOB, g, raw, 2, 0.1, 8.0, 0.1, 3, raw / 2));
                }
                log.append(new Event.StagingProgress(JOB, g, "n0", 0, raw, 0, 0));
                Thread.sleep(toQuarterMillis[g]);
                log.append(new Event.StagingProgress(JOB, g, "n0", raw / 4, raw, raw / 8, raw / 8));
                if (g == toQuarterMillis.length - 1) {
                    log.append(new Event.PredictionMade(JOB, g, raw, 2, 0.1, 9.0, 0.1, 3, raw / 2, 0.25));
                }
                Thread.sleep(200);
                log.append(new Event.ImageStaged(JOB, g, 0, "remote", raw / 2, raw / 4, 0.2));
                log.append(new Event.ImageStaged(JOB, g, 1, "remote", raw / 2, raw / 4, 0.2));
                log.append(new Event.SnapshotEstablished(JOB, g, "remote",
                        (System.currentTimeMillis() - requested) / 1000.0));
            }
            LogOptions options = new LogOptions();
            options.kafka = broker.bootstrapServers();
            options.home = tmp.resolve("home");
            JobView history;
            JobView withStaging;
            try (LogConnection c = options.open()) {
                history = c.replay().get(JOB).orElseThrow();
                withStaging = c.replayWithStaging().get(JOB).orElseThrow();
            }
            GenerationView last = generation(withStaging, toQuarterMillis.length - 1);
            assertTrue(Double.isNaN(generation(history, 1).secondsToMark(0.25)), "the events topic has no reports");
            for (int g = 0; g < toQuarterMillis.length; g++) {
                double atMark = generation(withStaging, g).secondsToMark(0.25);
                assertTrue(atMark >= toQuarterMillis[g] / 1000.0 && atMark < generation(withStaging, g)
                        .secondsToEstablished(), "generation " + g + " passed a quarter at " + atMark + " s");
                assertTrue(Double.isNaN(generation(withStaging, g).secondsToMark(0.5)), "never past a quarter");
            }
            List<ForecastErrors.Row> refit = ForecastErrors.refit(withStaging, 0.25);
            assertEquals(1, refit.size(), refit.toString());
            assertEquals(toQuarterMillis.length - 1, refit.get(0).generation());
            assertTrue(refit.get(0).predicted() > last.secondsToMark(0.25) && refit.get(0).predicted() < 9.0,
                    refit.toString());

            ByteArrayOutputStream out = new ByteArrayOutputStream();
            Accuracy.print(JOB, options, false, true, new PrintStream(out, true, StandardCharsets.UTF_8));
            String text = out.toString(StandardCharsets.UTF_8);
            assertTrue(text.contains("forecast again at 25% of the bytes read for staging (1 forecasts)"), text);
            ByteArrayOutputStream asLogged = new ByteArrayOutputStream();
            Accuracy.print(JOB, options, false, false, new PrintStream(asLogged, true, StandardCharsets.UTF_8));
            assertTrue(asLogged.toString(StandardCharsets.UTF_8).contains("| 9.00 |"), "the log's own: 9 s");
        }
    }

    private static GenerationView generation(JobView j, long g) {
        return j.generations().stream().filter(x -> x.generation() == g).findFirst().orElseThrow();
    }
}
