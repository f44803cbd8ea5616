package io.ferry.cli;

import io.ferry.eventlog.EmbeddedKafka;
import io.ferry.coordinator.Jobs;
import io.ferry.eventlog.KafkaClientSettings;
import io.ferry.eventlog.KafkaLog;
import io.ferry.eventlog.LogReplay;
import io.ferry.eventlog.LogSettings;
import io.ferry.model.Event;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;

import java.io.Closeable;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

/**
 * The event log a command talks to: {@code --kafka host:port}, else the broker of the job
 * running from this home, else the home's embedded broker, started just for this command.
 */
final class LogConnection implements Closeable {
    private final EmbeddedKafka owned;
    final KafkaLog log;

    private LogConnection(EmbeddedKafka owned, KafkaLog log) {
        this.owned = owned;
        this.log = log;
    }

    static LogConnection open(FerryHome home, String kafka) throws IOException {
        if (kafka != null) {
            return new LogConnection(null, new KafkaLog(kafka, KafkaAccess.configured(kafka).client(),
                    LogSettings.EXTERNAL));
        }
        EmbeddedKafka k;
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            Optional<Properties> run = home.activeRun();
            if (run.isPresent()) {
                // the login the configuration gives, where the serving process asks for one
                String bootstrap = run.get().getProperty("bootstrap");
                return new LogConnection(null,
                        new KafkaLog(bootstrap, Boolean.parseBoolean(run.get().getProperty("secured"))
                        ? KafkaAccess.configured(bootstrap).client() : KafkaClientSettings.NONE,
                        LogSettings.EXTERNAL));
            }
            try {
                k = EmbeddedKafka.start(home.kafka());
                break;
            } catch (EmbeddedKafka.BusyException busy) {
                // A run is starting (its run file comes next) or another command reads the log.
                if (System.nanoTime() > deadline) {
                    throw busy;
                }
                sleep(200);
            }
        }
        try {
            return new LogConnection(k, new KafkaLog(k.localBootstrapServers(), k.localClient(),
                    LogSettings.EMBEDDED));
        } catch (IOException | RuntimeException e) {
            k.close();
            throw e;
        }
    }

    private static void sleep(long ms) throws IOException {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted waiting for the embedded Kafka log");
        }
    }

    /** Folds the whole events topic, as the coordinator does, without acting on it. */
    Jobs replay() {
        Jobs jobs = new Jobs();
        try (KafkaConsumer<byte[], byte[]> c = log.reader(KafkaLog.EVENTS, true)) {
            LogReplay.events(c, LogReplay.NO_LIMIT, jobs::fold); // what the coordinator refused is not shown
        }
        return jobs;
    }

    /**
     * {@link #replay()} with the nodes' staging reports the heartbeats topic still keeps (an hour,
     * {@link KafkaLog#HEARTBEATS}) folded in among each job's events by log time, as the coordinator
     * folded them live: when each generation passed {@link io.ferry.coordinator.predict.StagingSoFar#MARKS}
     * of its bytes read, which {@code ferry plan --accuracy J --refit} forecasts again from. A report
     * logged at the same millisecond as an event is folded after it.
     */
    Jobs replayWithStaging() {
        Map<String, List<ConsumerRecord<byte[], byte[]>>> reports = new HashMap<>();
        try (KafkaConsumer<byte[], byte[]> c = log.reader(KafkaLog.HEARTBEATS, true)) {
            LogReplay.events(c, LogReplay.NO_LIMIT, (e, r) -> {
                if (e instanceof Event.StagingProgress) {
                    reports.computeIfAbsent(e.job(), j -> new ArrayList<>()).add(r);
                }
            });
        }
        Map<String, Deque<ConsumerRecord<byte[], byte[]>>> staging = new HashMap<>();
        reports.forEach((job, rs) -> {
            rs.sort(Comparator.comparingLong(ConsumerRecord::timestamp)); // partitions interleave
            staging.put(job, new ArrayDeque<>(rs));
        });
        Jobs jobs = new Jobs();
        try (KafkaConsumer<byte[], byte[]> c = log.reader(KafkaLog.EVENTS, true)) {
            LogReplay.events(c, LogReplay.NO_LIMIT, (e, r) -> {
                Deque<ConsumerRecord<byte[], byte[]>> q = staging.get(e.job());
                while (q != null && !q.isEmpty() && q.peek().timestamp() < r.timestamp()) {
                    ConsumerRecord<byte[], byte[]> p = q.poll();
                    LogReplay.decoded(p).ifPresent(progress -> jobs.apply(progress, p.timestamp()));
                }
                jobs.fold(e, r);
            });
        }
        return jobs;
    }

    @Override
    public void close() {
        log.close();
        if (owned != null) {
            owned.close();
        }
    }
}
