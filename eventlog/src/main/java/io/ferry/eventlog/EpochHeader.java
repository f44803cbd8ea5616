package io.ferry.eventlog;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;

import java.nio.ByteBuffer;

/**
 * The epoch a command names: that of the newest agent of its node the coordinator heard
 * ({@link NodeClaim}), in a record header, so the command's own format is unchanged and an older
 * coordinator's commands simply carry none. Stateless.
 */
public final class EpochHeader {
    /** The header's name. */
    public static final String NAME = "ferry-epoch";

    private EpochHeader() {
    }

    /** Adds {@code epoch} to {@code r} (nothing when it is -1: no agent of the node heard yet). */
    static void stamp(ProducerRecord<byte[], byte[]> r, long epoch) {
        if (epoch >= 0) {
            r.headers().add(NAME, ByteBuffer.allocate(Long.BYTES).putLong(epoch).array());
        }
    }

    /**
     * The epoch a command was stamped with, or -1 (sent before its node's agent was heard, or by an older coordinator).
     */
    public static long of(ConsumerRecord<byte[], byte[]> r) {
        Header h = r.headers().lastHeader(NAME);
        if (h == null || h.value() == null || h.value().length != Long.BYTES) {
            return -1;
        }
        return ByteBuffer.wrap(h.value()).getLong();
    }
}
