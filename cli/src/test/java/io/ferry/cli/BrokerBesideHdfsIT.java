package io.ferry.cli;

import io.ferry.eventlog.EmbeddedKafka;
import io.ferry.eventlog.KafkaLog;
import io.ferry.eventlog.LogReplay;
import io.ferry.eventlog.LogSettings;
import io.ferry.model.Event;
import io.ferry.stores.hdfs.MiniHdfs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * An embedded broker starts in a JVM that has run Hadoop's servers (a MiniDFSCluster): Hadoop
 * registers a SASL/PLAIN server of its own, which, found first, refused every login to the
 * broker's listeners, its own registration with its controller too; the broker never started
 * (seen when the integration tests ran in two JVMs and one met HDFS before a broker).
 */
class BrokerBesideHdfsIT {
    @TempDir
    Path tmp;

    @Test
    void aBrokerStartsAfterHdfsRanInTheSameJvm() throws Exception {
        try (MiniHdfs hdfs = new MiniHdfs(tmp.resolve("hdfs"))) {
            hdfs.stopDataNode(); // it ran: Hadoop's servers have registered what they register
        }
        try (EmbeddedKafka k = EmbeddedKafka.start(tmp.resolve("kafka"));
             KafkaLog log = new KafkaLog(k.bootstrapServers(), k.login(), LogSettings.EMBEDDED)) {
            log.append(new Event.CheckpointRequested("j", 0, "a login over PLAIN, beside HDFS"));
            try (var c = log.reader(KafkaLog.EVENTS, true)) {
                List<Event> read = new ArrayList<>();
                LogReplay.events(c, Duration.ofMinutes(1), (e, r) -> read.add(e));
                assertEquals(1, read.size(), read.toString());
            }
        }
    }
}
