package io.ferry.coordinator;

import io.ferry.eventlog.KafkaLog;
import io.ferry.eventlog.LogReplay;
import io.ferry.model.DaemonThreads;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.zip.CRC32;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.Inflater;

/**
 * Coordinators' snapshots of their folded state on {@link KafkaLog#SNAPSHOTS} (compacted), one per
 * events partition: a coordinator that takes a partition on loads the newest snapshot of it and
 * replays only the events after it, so its start does not grow with the age of the jobs.
 *
 * <p>A snapshot is {@link FoldSnapshot}'s bytes, deflated and cut into pieces of at most
 * {@link #PIECE} bytes (a record may not exceed {@link KafkaLog#MAX_RECORD_BYTES}), keyed
 * {@code events-P/ID/I}, then an index record keyed {@code events-P}, written last, that names the
 * pieces' id and count, their checksum, and the last events record the state folded (its offset
 * and a checksum of its value). A snapshot is used only if every piece is there and checks, and
 * the events partition still holds that record at that offset: a log made again, or one that lost
 * its tail, is replayed from its beginning. Any doubt costs a full replay, never a wrong state.
 * After an index is written, the pieces of the snapshots it replaces are deleted (tombstones).
 *
 * <p>Snapshots are derived and re-creatable while the events topic keeps its whole history; where
 * a retention (or an operator) thinned it, a partition's snapshot is what covers the events
 * deleted, and a coordinator starts only while each thinned partition's snapshot still reaches
 * its log start ({@link #reach}). A log whose login may not make the topic runs without
 * snapshots (said once).
 */
final class SnapshotTopic implements AutoCloseable {
    static final int PIECE = 3 << 20;
    private static final String PREFIX = "events-";
    private final KafkaLog log;
    private final String who;
    private final ExecutorService writer = Executors.newSingleThreadExecutor(
            r -> DaemonThreads.unstarted("ferry-coordinator-snapshots", r));
    private volatile boolean warned;

    /** A partition's state as a snapshot left it. */
    record Loaded(long nextOffset, List<JobView> jobs, Index index) {}

    SnapshotTopic(KafkaLog log, String who) {
        this.log = log;
        this.who = who;
    }

    /**
     * The newest usable snapshot of each of {@code parts} (events partitions) that has one. Blocks
     * while it reads the snapshots topic; a snapshot that cannot be used is said and skipped.
     */
    Map<Integer, Loaded> load(Collection<TopicPartition> parts) {
        Map<Integer, Loaded> out = new HashMap<>();
        if (parts.isEmpty()) {
            return out;
        }
        Map<String, byte[]> latest = readAll();
        if (latest.isEmpty()) {
            return out;
        }
        for (TopicPartition tp : parts) {
            byte[] index = latest.get(PREFIX + tp.partition());
            if (index == null) {
                continue;
            }
            try {
                out.put(tp.partition(), loadOne(tp, Index.parse(new String(index, StandardCharsets.UTF_8)), latest));
            } catch (IllegalArgumentException | IllegalStateException e) {
                System.err.println("ferry coordinator " + who + ": the snapshot of events partition " + tp.partition()
                        + " cannot be used (" + e.getMessage() + "): replaying its whole history");
            }
        }
        // Pieces of these partitions that no index names (a writer that died between its pieces and its
        // index, or one that lost the partition while writing) are deleted, so the topic holds what is used.
        for (String key : latest.keySet()) {
            int slash = key.indexOf('/');
            int last = key.lastIndexOf('/');
            if (!key.startsWith(PREFIX) || slash < 0 || last <= slash) {
                continue;
            }
            String part = key.substring(PREFIX.length(), slash);
            boolean ours = parts.stream().anyMatch(tp -> Integer.toString(tp.partition()).equals(part));
            Loaded used = ours ? out.get(Integer.parseInt(part)) : null;
            if (ours && (used == null || !used.index().id().equals(key.substring(slash + 1, last)))) {
                writer.execute(() -> tombstone(key));
            }
        }
        return out;
    }

    /**
     * How far a partition's newest snapshot reaches: the events offset it folded last, or -1 and why none is usable.
     */
    record Reach(long lastOffset, String why) {}

    /**
     * How far the newest snapshot of each of {@code parts} reaches, checked as {@link #load} checks
     * it (every piece there and whole, the events record it folded last still at its offset) but
     * neither decoded nor tidied: what a start asks of a thinned events topic. Blocks while it reads.
     */
    Map<Integer, Reach> reach(Collection<TopicPartition> parts) {
        Map<Integer, Reach> out = new HashMap<>();
        Map<String, byte[]> latest = parts.isEmpty() ? Map.of() : readAll();
        for (TopicPartition tp : parts) {
            byte[] index = latest.get(PREFIX + tp.partition());
            if (index == null) {
                out.put(tp.partition(), new Reach(-1, "it has no snapshot"));
                continue;
            }
            try {
                Index ix = Index.parse(new String(index, StandardCharsets.UTF_8));
                checked(tp, ix, latest);
                out.put(tp.partition(), new Reach(ix.lastOffset, ""));
            } catch (IllegalArgumentException | IllegalStateException e) {
                out.put(tp.partition(), new Reach(-1, "its snapshot cannot be used: " + e.getMessage()));
            }
        }
        return out;
    }

    private Loaded loadOne(TopicPartition tp, Index ix, Map<String, byte[]> latest) {
        List<JobView> jobs = FoldSnapshot.decode(inflate(checked(tp, ix, latest), ix.bytes));
        return new Loaded(ix.lastOffset + 1, jobs, ix);
    }

    /** The snapshot's deflated bytes, once its pieces and the events record it folded last are checked. */
    private byte[] checked(TopicPartition tp, Index ix, Map<String, byte[]> latest) {
        ByteArrayOutputStream deflated = new ByteArrayOutputStream();
        for (int i = 0; i < ix.pieces; i++) {
            byte[] piece = latest.get(PREFIX + tp.partition() + "/" + ix.id + "/" + i);
            if (piece == null) {
                throw new IllegalStateException("piece " + i + " of " + ix.pieces + " is missing");
            }
            deflated.writeBytes(piece);
        }
        byte[] all = deflated.toByteArray();
        if (crc(all) != ix.crc) {
            throw new IllegalStateException("its pieces do not match the checksum of its index");
        }
        long found = lastRecordCrc(tp, ix.lastOffset);
        if (found != ix.lastCrc) {
            throw new IllegalStateException(found < 0 ? "the events partition no longer holds offset " + ix.lastOffset
                    : "the events record at offset " + ix.lastOffset + " is not the one it folded");
        }
        return all;
    }

    /**
     * Writes a snapshot of an events partition in the background: {@code state} folds every record
     * of it up to {@code lastOffset}, whose value has checksum {@code lastCrc}. {@code previous}: the
     * snapshot it replaces (null: none known), whose pieces are deleted once the new index is
     * written; {@code written} is told the new index.
     */
    void write(int partition, long lastOffset, long lastCrc, byte[] state, Index previous, Consumer<Index> written) {
        writer.execute(() -> {
            try {
                byte[] deflated = deflate(state);
                String id = Long.toString(System.currentTimeMillis(), 36) + "-"
                        + Long.toString(System.nanoTime() & 0xffffff, 36);
                int pieces = (deflated.length + PIECE - 1) / PIECE;
                for (int i = 0; i < pieces; i++) {
                    byte[] piece = Arrays.copyOfRange(deflated, i * PIECE, Math.min(deflated.length, (i + 1) * PIECE));
                    log.sendRaw(KafkaLog.SNAPSHOTS, PREFIX + partition + "/" + id + "/" + i, piece);
                }
                Index ix = new Index(id, pieces, crc(deflated), state.length, lastOffset, lastCrc);
                log.sendRaw(KafkaLog.SNAPSHOTS, PREFIX + partition, ix.toString().getBytes(StandardCharsets.UTF_8));
                if (previous != null && !previous.id().equals(id)) {
                    for (int i = 0; i < previous.pieces(); i++) {
                        tombstone(PREFIX + partition + "/" + previous.id() + "/" + i);
                    }
                }
                written.accept(ix);
                System.err.println("ferry coordinator " + who + ": snapshot of events partition " + partition
                        + " up to offset " + lastOffset + " written (" + state.length + " bytes, " + deflated.length
                        + " deflated)");
            } catch (RuntimeException e) {
                if (!warned) {
                    warned = true;
                    System.err.println("ferry coordinator " + who + ": cannot write a snapshot to "
                            + KafkaLog.SNAPSHOTS + " (" + e.getMessage() + "): a restart replays the whole history");
                }
            }
        });
    }

    private void tombstone(String key) {
        log.sendRaw(KafkaLog.SNAPSHOTS, key, null);
    }

    /** Every key's latest value in the snapshots topic (tombstones removed); empty if there is no such topic. */
    private Map<String, byte[]> readAll() {
        Map<String, byte[]> latest = new HashMap<>();
        try (KafkaConsumer<byte[], byte[]> c = log.reader(KafkaLog.SNAPSHOTS, true)) { // none: no partitions
            boolean whole = LogReplay.records(c, Duration.ofMinutes(2), r -> {
                String key = r.key() == null ? "" : new String(r.key(), StandardCharsets.UTF_8);
                if (r.value() == null) {
                    latest.remove(key);
                } else {
                    latest.put(key, r.value());
                }
            });
            if (!whole) {
                throw new IllegalStateException("reading " + KafkaLog.SNAPSHOTS + " took over 2 minutes");
            }
        } catch (RuntimeException e) {
            System.err.println("ferry coordinator " + who + ": cannot read " + KafkaLog.SNAPSHOTS + " ("
                    + e.getMessage() + "): replaying the whole history");
            latest.clear();
        }
        return latest;
    }

    /** The checksum of the events record at {@code offset} of {@code tp}, or -1 if the partition does not hold it. */
    private long lastRecordCrc(TopicPartition tp, long offset) {
        try (KafkaConsumer<byte[], byte[]> c = log.reader(KafkaLog.EVENTS, true)) {
            c.assign(List.of(tp));
            if (c.endOffsets(List.of(tp)).get(tp) <= offset) {
                return -1;
            }
            c.seek(tp, offset);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    return r.offset() == offset ? crc(r.value()) : -1;
                }
            }
            return -1;
        }
    }

    static long crc(byte[] b) {
        CRC32 crc = new CRC32();
        if (b != null) {
            crc.update(b);
        }
        return crc.getValue();
    }

    private static byte[] deflate(byte[] raw) {
        Deflater d = new Deflater(Deflater.BEST_SPEED);
        try {
            d.setInput(raw);
            d.finish();
            ByteArrayOutputStream out = new ByteArrayOutputStream(Math.max(64, raw.length / 4));
            byte[] buf = new byte[1 << 16];
            while (!d.finished()) {
                out.write(buf, 0, d.deflate(buf));
            }
            return out.toByteArray();
        } finally {
            d.end();
        }
    }

    private static byte[] inflate(byte[] deflated, int size) {
        Inflater i = new Inflater();
        try {
            i.setInput(deflated);
            byte[] out = new byte[size];
            int n = 0;
            while (n < size && !i.finished()) {
                int got = i.inflate(out, n, size - n);
                if (got == 0 && (i.needsInput() || i.needsDictionary())) {
                    break;
                }
                n += got;
            }
            if (n != size || !i.finished()) {
                throw new IllegalStateException("its pieces inflate to " + n + " bytes, not the " + size
                        + " its index names");
            }
            return out;
        } catch (DataFormatException e) {
            throw new IllegalStateException("its pieces do not inflate: " + e.getMessage(), e);
        } finally {
            i.end();
        }
    }

    /** Waits (a bounded time) for a snapshot being written, so a coordinator stopped on purpose leaves it whole. */
    @Override
    public void close() {
        writer.shutdown();
        try {
            if (!writer.awaitTermination(30, TimeUnit.SECONDS)) {
                writer.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The index record: {@code id=... pieces=N crc=C bytes=B last=OFFSET lastcrc=C}. */
    record Index(String id, int pieces, long crc, int bytes, long lastOffset, long lastCrc) {
        static Index parse(String text) {
            Map<String, String> kv = new HashMap<>();
            for (String part : text.trim().split(" +")) {
                int eq = part.indexOf('=');
                if (eq > 0) {
                    kv.put(part.substring(0, eq), part.substring(eq + 1));
                }
            }
            try {
                String version = Optional.ofNullable(kv.get("version")).orElse("");
                if (!version.equals("1")) {
                    throw new IllegalArgumentException("an index of version '" + version
                            + "', this coordinator reads 1");
                }
                Index ix = new Index(kv.getOrDefault("id", ""), Integer.parseInt(kv.get("pieces")),
                        Long.parseLong(kv.get("crc")), Integer.parseInt(kv.get("bytes")),
                        Long.parseLong(kv.get("last")), Long.parseLong(kv.get("lastcrc")));
                if (ix.id.isEmpty() || ix.id.contains("/") || ix.pieces < 0 || ix.bytes < 0 || ix.lastOffset < 0) {
                    throw new IllegalArgumentException("an index out of range: " + text);
                }
                return ix;
            } catch (NumberFormatException | NullPointerException e) {
                throw new IllegalArgumentException("a malformed index: " + text);
            }
        }

        @Override
        public String toString() {
            return "version=1 id=" + id + " pieces=" + pieces + " crc=" + crc + " bytes=" + bytes
                    + " last=" + lastOffset + " lastcrc=" + lastCrc;
        }
    }
}
