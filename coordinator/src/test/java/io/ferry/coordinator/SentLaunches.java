package io.ferry.coordinator;

import io.ferry.eventlog.KafkaLog;
import io.ferry.model.Command;
import io.ferry.model.EventCodec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** What the nodes would read: the launch commands among those a reader of the commands topic gets next. */
final class SentLaunches {
    private SentLaunches() {}

    /** The launches of one poll of {@code c} (100 ms at most); the other commands are passed over. */
    static List<Command.Launch> poll(KafkaConsumer<byte[], byte[]> c) {
        List<Command.Launch> out = new ArrayList<>();
        for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(100))) {
            if (EventCodec.decodeCommand(r.value()) instanceof Command.Launch l) {
                out.add(l);
            }
        }
        return out;
    }

    /** The launches among every command sent to the topic so far (read up to its end as of this call). */
    static List<Command.Launch> allSent(KafkaConsumer<byte[], byte[]> c) {
        List<Command.Launch> out = new ArrayList<>();
        Map<TopicPartition, Long> sent = KafkaLog.ends(c);
        while (!KafkaLog.reached(c, sent)) {
            out.addAll(poll(c));
        }
        return out;
    }
}
