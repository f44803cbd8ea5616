package io.ferry.eventlog;

import io.ferry.model.Command;
import io.ferry.model.Event;
import io.ferry.model.EventCodec;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The replay every reader of the history shares, against a real broker: every record to the end
 * as it was when the replay began, a malformed one skipped and not the ones after it, and a limit
 * that passes before the end said as such.
 */
class LogReplayIT {
    @TempDir
    Path tmp;

    @Test
    void aReplayReadsToTheEndAsItWasSkippingWhatDoesNotDecode() throws Exception {
        try (EmbeddedKafka k = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(k.bootstrapServers(), KafkaClientSettings.NONE, LogSettings.EMBEDDED)) {
            log.append(new Event.CheckpointRequested("j", 0, "first"));
            log.sendRaw(KafkaLog.EVENTS, "j", "not an event".getBytes(StandardCharsets.UTF_8));
            log.append(new Event.CheckpointRequested("j", 1, "after the bad one"));
            log.append(new Event.CheckpointRequested("other", 0, "another job"));

            List<String> seen = new ArrayList<>();
            int[] records = {0};
            try (KafkaConsumer<byte[], byte[]> c = log.reader(KafkaLog.EVENTS, true)) {
                assertTrue(LogReplay.events(c, LogReplay.NO_LIMIT, (e, r) -> {
                    records[0]++;
                    seen.add(e.job() + "/" + ((Event.CheckpointRequested) e).generation());
                    if (seen.size() == 1) { // appended while the replay runs: after its end
                        log.append(new Event.CheckpointRequested("j", 9, "late"));
                    }
                }));
            }
            assertEquals(List.of("j/0", "j/1"), seen.stream().filter(x -> x.startsWith("j/")).toList(),
                    "a job's events in order (a job is one partition), the malformed record left out");
            assertTrue(seen.contains("other/0"), seen.toString());
            assertEquals(3, records[0]);

            try (KafkaConsumer<byte[], byte[]> c = log.reader(KafkaLog.EVENTS, true)) {
                List<Object> raw = new ArrayList<>();
                assertTrue(LogReplay.records(c, Duration.ofMinutes(1), raw::add));
                assertEquals(5, raw.size(), "every record, the malformed one and the late one too");
            }
            try (KafkaConsumer<byte[], byte[]> c = log.reader(KafkaLog.EVENTS, true)) {
                assertFalse(LogReplay.records(c, Duration.ZERO, r -> { }), "a limit passed before the end");
            }
        }
    }

    /**
     * A resumable reader (a coordinator's commands) that was never asked anything, then restarted:
     * what was sent while it was down is read by the next start. Before, only a reader that had
     * handled a record had a place kept, and the next start began at the end: a halt sent while a
     * coordinator restarted was lost (found by {@code CoordinatorRestartIT}, about one run in five).
     */
    @Test
    void aResumableReaderNeverAskedAnythingReadsWhatWasSentWhileItWasDown() throws Exception {
        try (EmbeddedKafka k = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(k.bootstrapServers(), KafkaClientSettings.NONE, LogSettings.EMBEDDED)) {
            log.send(KafkaLog.COORDINATOR, new Command.Halt("j", 1, "before the first start"));
            try (KafkaConsumer<byte[], byte[]> c = log.resumableReader(KafkaLog.COMMANDS, "me-commands")) {
                assertTrue(c.poll(Duration.ofSeconds(1)).isEmpty(), "a first start begins at the end");
            }
            log.send(KafkaLog.COORDINATOR, new Command.Halt("j", 2, "while it was down"));
            try (KafkaConsumer<byte[], byte[]> c = log.resumableReader(KafkaLog.COMMANDS, "me-commands")) {
                List<String> why = new ArrayList<>();
                long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (why.isEmpty() && System.nanoTime() < until) {
                    c.poll(Duration.ofMillis(200)).forEach(r ->
                            why.add(((Command.Halt) EventCodec.decodeCommand(r.value()))
                                    .why()));
                }
                assertEquals(List.of("while it was down"), why);
            }
        }
    }
}
