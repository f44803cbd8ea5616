package io.ferry.coordinator;

import io.ferry.coordinator.predict.StagingSoFar;
import io.ferry.model.Event;
import io.ferry.model.Placement;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32;

/**
 * The folded state of some jobs in a binary form: what a coordinator writes so that the next one
 * to own the jobs' partition starts from it and replays only the events after it, instead of the
 * job's whole history (a month of checkpoints of a 1,000-node job is millions of events).
 *
 * <p>It carries exactly what {@link Jobs#apply} folds, so that decoding a snapshot taken after
 * event k and folding events k+1.. gives the state a fold of every event gives
 * ({@code FoldSnapshotTest}). The coordinator's own decision state (fields documented as "not
 * folded": a rollback decided, a marker written, captures sent again) is not carried: a start from
 * a snapshot has it as a replay would, at its initial values.
 *
 * <p>Form: a magic number, {@link #VERSION}, the jobs, then a CRC-32 of everything before it. A
 * snapshot of another version, or one that does not check, is refused with
 * {@link IllegalArgumentException}: the caller then replays the history, which is always there.
 * Counts are checked against the bytes left, so a corrupt or forged snapshot cannot make the
 * decoder allocate more than its own size.
 */
final class FoldSnapshot {
    static final int MAGIC = 0x46534E50; // "FSNP"
    /** Changes whenever the form or what the fold keeps changes: an older snapshot is then replayed past. */
    static final int VERSION = 8;

    private FoldSnapshot() {}

    static byte[] encode(Collection<JobView> jobs) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(1 << 16);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(MAGIC);
            out.writeInt(VERSION);
            out.writeInt(jobs.size());
            for (JobView j : jobs) {
                writeJob(out, j);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a byte array does not fail
        }
        byte[] body = bytes.toByteArray();
        CRC32 crc = new CRC32();
        crc.update(body);
        return ByteBuffer.allocate(body.length + 4).put(body).putInt((int) crc.getValue()).array();
    }

    static List<JobView> decode(byte[] bytes) {
        if (bytes == null || bytes.length < 16) {
            throw new IllegalArgumentException("not a coordinator snapshot: " + (bytes == null ? 0 : bytes.length)
                    + " bytes, fewer than its header");
        }
        CRC32 crc = new CRC32();
        crc.update(bytes, 0, bytes.length - 4);
        if ((int) crc.getValue() != ByteBuffer.wrap(bytes, bytes.length - 4, 4).getInt()) {
            throw new IllegalArgumentException("coordinator snapshot of " + bytes.length
                    + " bytes does not match its checksum (cut short or damaged)");
        }
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes, 0, bytes.length - 4))) {
            if (in.readInt() != MAGIC) {
                throw new IllegalArgumentException("not a coordinator snapshot (bad magic number)");
            }
            int version = in.readInt();
            if (version != VERSION) {
                throw new IllegalArgumentException("coordinator snapshot of version " + version
                        + ", this coordinator reads " + VERSION);
            }
            int n = SnapshotData.count(in, 8);
            List<JobView> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                out.add(readJob(in));
            }
            if (in.available() != 0) {
                throw new IllegalArgumentException("coordinator snapshot has " + in.available()
                        + " bytes after its jobs");
            }
            return out;
        } catch (EOFException e) {
            throw new IllegalArgumentException("coordinator snapshot ends in the middle of a job", e);
        } catch (IOException e) {
            throw new IllegalArgumentException("coordinator snapshot cannot be read: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            if (e instanceof IllegalArgumentException) {
                throw e;
            }
            throw new IllegalArgumentException("coordinator snapshot holds a value the fold cannot: " + e, e);
        }
    }

    private static void writeJob(DataOutputStream out, JobView j) throws IOException {
        SnapshotData.writeString(out, j.job);
        SnapshotData.writeEvent(out, j.started);
        SnapshotData.writeString(out, j.owner);
        out.writeInt(j.nodeNames.size());
        for (int i = 0; i < j.nodeNames.size(); i++) {
            SnapshotData.writeString(out, j.nodeNames.name(i));
        }
        // Generations share the job's placement object while it is unchanged: written once, referred to by number.
        IdentityHashMap<Placement, Integer> placements = new IdentityHashMap<>();
        List<Placement> table = new ArrayList<>();
        for (Placement p : placementsOf(j)) {
            if (p != null && placements.putIfAbsent(p, table.size()) == null) {
                table.add(p);
            }
        }
        out.writeInt(table.size());
        for (Placement p : table) {
            SnapshotData.writeString(out, p.toString());
            out.writeInt(p.ranks());
        }
        out.writeInt(j.placement == null ? -1 : placements.get(j.placement));
        SnapshotData.writeMap(out, j.exits, (k, v) -> out.writeInt(k), (k, v) -> out.writeInt(v));
        j.restarts.writeTo(out);
        out.writeInt(j.recoveries);
        out.writeInt(j.rollbacksWithoutProgress);
        out.writeLong(j.progressMark);
        out.writeLong(j.lastRecoveryMillis);
        out.writeLong(j.rollbackGeneration);
        out.writeBoolean(j.rollingBack);
        SnapshotData.writeEvent(out, j.launcherExit);
        SnapshotData.writeEvent(out, j.restoreFailed);
        SnapshotData.writeStrings(out, j.restoredNodes);
        SnapshotData.writeBits(out, j.restoredRanks);
        out.writeInt(j.launchAttempt);
        out.writeLong(j.launchGeneration);
        SnapshotData.writeString(out, j.launchCause);
        out.writeLong(j.lastRequestMillis);
        SnapshotData.writeMap(out, j.heartbeats, (k, v) -> SnapshotData.writeString(out, k),
                (k, v) -> out.writeLong(v));
        out.writeLong(j.launcherSeenMillis);
        SnapshotData.writeStrings(out, j.answered);
        SnapshotData.writeString(out, j.launchFailure);
        out.writeLong(j.startedAtMillis);
        out.writeLong(j.finishedAtMillis);
        out.writeLong(j.haltDeadlineMillis);
        out.writeLong(j.haltRequestedAtMillis);
        out.writeBoolean(j.halted);
        out.writeBoolean(j.launched);
        out.writeBoolean(j.startResumes);
        out.writeLong(j.startPlacedAtMillis);
        SnapshotData.writeStrings(out, j.startAnswered);
        SnapshotData.writeMap(out, j.storeHealth, (k, v) -> SnapshotData.writeString(out, k),
                (k, v) -> SnapshotData.writeEvent(out, v));
        SnapshotData.writeMap(out, j.peers, (k, v) -> SnapshotData.writeString(out, k),
                (k, v) -> SnapshotData.writeString(out, v));
        SnapshotData.writeMap(out, j.peerSeenMillis, (k, v) -> SnapshotData.writeString(out, k),
                (k, v) -> out.writeLong(v));
        SnapshotData.writeMap(out, j.caches, (k, v) -> SnapshotData.writeString(out, k),
                (k, v) -> SnapshotData.writeEvent(out, v));
        out.writeByte(j.success == null ? -1 : j.success ? 1 : 0);
        SnapshotData.writeString(out, j.finishDetail);
        out.writeInt(j.generations.size());
        for (GenerationView g : j.generations.values()) {
            writeGeneration(out, g, g.placement == null ? -1 : placements.get(g.placement));
        }
    }

    private static List<Placement> placementsOf(JobView j) {
        List<Placement> all = new ArrayList<>();
        all.add(j.placement);
        j.generations.values().forEach(g -> all.add(g.placement));
        return all;
    }

    private static JobView readJob(DataInputStream in) throws IOException {
        JobView j = new JobView(SnapshotData.readString(in));
        j.started = SnapshotData.readEvent(in, Event.JobStarted.class);
        j.owner = SnapshotData.readString(in);
        int names = SnapshotData.count(in, 4);
        for (int i = 0; i < names; i++) {
            j.nodeNames.index(SnapshotData.readString(in));
        }
        int n = SnapshotData.count(in, 8);
        List<Placement> table = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            String text = SnapshotData.readString(in);
            table.add(Placement.parse(text, in.readInt()));
        }
        j.placement = placement(table, in.readInt());
        SnapshotData.readMap(in, 8, () -> j.exits.put(in.readInt(), in.readInt()));
        j.restarts.readFrom(in);
        j.recoveries = in.readInt();
        j.rollbacksWithoutProgress = in.readInt();
        j.progressMark = in.readLong();
        j.lastRecoveryMillis = in.readLong();
        j.rollbackGeneration = in.readLong();
        j.rollingBack = in.readBoolean();
        j.launcherExit = SnapshotData.readEvent(in, Event.LauncherExited.class);
        j.restoreFailed = SnapshotData.readEvent(in, Event.RestoreFailed.class);
        SnapshotData.readMap(in, 4, () -> j.restoredNodes.add(SnapshotData.readString(in)));
        j.restoredRanks.or(SnapshotData.orEmpty(SnapshotData.readBits(in)));
        j.launchAttempt = in.readInt();
        j.launchGeneration = in.readLong();
        j.launchCause = SnapshotData.readString(in);
        j.lastRequestMillis = in.readLong();
        SnapshotData.readMap(in, 12, () -> j.heartbeats.put(SnapshotData.readString(in), in.readLong()));
        j.launcherSeenMillis = in.readLong();
        SnapshotData.readMap(in, 4, () -> j.answered.add(SnapshotData.readString(in)));
        j.launchFailure = SnapshotData.readString(in);
        j.startedAtMillis = in.readLong();
        j.finishedAtMillis = in.readLong();
        j.haltDeadlineMillis = in.readLong();
        j.haltRequestedAtMillis = in.readLong();
        j.halted = in.readBoolean();
        j.launched = in.readBoolean();
        j.startResumes = in.readBoolean();
        j.startPlacedAtMillis = in.readLong();
        SnapshotData.readMap(in, 4, () -> j.startAnswered.add(SnapshotData.readString(in)));
        SnapshotData.readMap(in, 8, () -> j.storeHealth.put(SnapshotData.readString(in),
                SnapshotData.readEvent(in, Event.StoreHealthReported.class)));
        SnapshotData.readMap(in, 8, () -> j.peers.put(SnapshotData.readString(in), SnapshotData.readString(in)));
        SnapshotData.readMap(in, 12, () -> j.peerSeenMillis.put(SnapshotData.readString(in), in.readLong()));
        SnapshotData.readMap(in, 8,
                () -> j.caches.put(SnapshotData.readString(in), SnapshotData.readEvent(in, Event.CacheReported.class)));
        byte success = in.readByte();
        j.success = success < 0 ? null : success == 1;
        j.finishDetail = SnapshotData.readString(in);
        int gens = SnapshotData.count(in, 8);
        for (int i = 0; i < gens; i++) {
            GenerationView g = readGeneration(in, j, table);
            if (j.generations.put(g.generation, g) != null) {
                throw new IllegalArgumentException("generation " + g.generation + " of job " + j.job + " twice");
            }
        }
        return j;
    }

    private static Placement placement(List<Placement> table, int i) {
        if (i < -1 || i >= table.size()) {
            throw new IllegalArgumentException("placement " + i + " of " + table.size());
        }
        return i < 0 ? null : table.get(i);
    }

    private static void writeGeneration(DataOutputStream out, GenerationView g, int placement) throws IOException {
        out.writeLong(g.generation);
        out.writeInt(g.ranks);
        out.writeByte(g.state.ordinal());
        out.writeInt(g.rankDetail.capturedCount);
        out.writeInt(g.rankDetail.stagedCount);
        out.writeLong(g.rawBytes);
        out.writeLong(g.storedBytes);
        out.writeDouble(g.maxStallSeconds);
        out.writeDouble(g.secondsToEstablished);
        SnapshotData.writeString(out, g.failure);
        SnapshotData.writeString(out, g.stagingProblem);
        SnapshotData.writeString(out, g.restoreFailure);
        out.writeLong(g.requestedAtMillis);
        out.writeLong(g.capturedAtMillis);
        out.writeLong(g.capturedLoggedAtMillis);
        out.writeLong(g.expectedWritten);
        out.writeInt(g.expectedRanks);
        out.writeLong(g.lastStagedAtMillis);
        out.writeLong(g.othersLeftAtCapture);
        SnapshotData.writeEvent(out, g.prediction);
        out.writeInt(g.marks.forecasts().size());
        for (Map.Entry<Double, Event.PredictionMade> e : g.marks.forecasts().entrySet()) {
            out.writeDouble(e.getKey());
            SnapshotData.writeEvent(out, e.getValue());
        }
        out.writeBoolean(g.stagingSoFar != null);
        if (g.stagingSoFar != null) {
            g.stagingSoFar.writeTo(out);
        }
        g.marks.writeTo(out);
        out.writeInt(placement);
        out.writeInt(g.partnerRanks);
        out.writeLong(g.partnerBytes);
        SnapshotData.writeBits(out, g.rankDetail.captured);
        SnapshotData.writeBits(out, g.rankDetail.staged);
        SnapshotData.writeInts(out, g.rankDetail.nodeOf);
        SnapshotData.writeLongs(out, g.rankDetail.bytes);
        SnapshotData.writeDoubles(out, g.rankDetail.stall);
        SnapshotData.writeDoubles(out, g.rankDetail.staging);
        SnapshotData.writeLongs(out, g.rankDetail.bytesByNode);
        SnapshotData.writeDoubles(out, g.rankDetail.stagingByNode);
        SnapshotData.writeBits(out, g.rankDetail.nodesCaptured);
        out.writeDouble(g.rankDetail.stragglerSpread);
    }

    private static GenerationView readGeneration(DataInputStream in, JobView j, List<Placement> table)
            throws IOException {
        long generation = in.readLong();
        GenerationView g = new GenerationView(generation, j.nodeNames, in.readInt(), false);
        GenerationView.State[] states = GenerationView.State.values();
        int state = in.readByte();
        if (state < 0 || state >= states.length) {
            throw new IllegalArgumentException("generation " + generation + " in state " + state);
        }
        g.state = states[state];
        g.rankDetail.capturedCount = in.readInt();
        g.rankDetail.stagedCount = in.readInt();
        g.rawBytes = in.readLong();
        g.storedBytes = in.readLong();
        g.maxStallSeconds = in.readDouble();
        g.secondsToEstablished = in.readDouble();
        g.failure = SnapshotData.readString(in);
        g.stagingProblem = SnapshotData.readString(in);
        g.restoreFailure = SnapshotData.readString(in);
        g.requestedAtMillis = in.readLong();
        g.capturedAtMillis = in.readLong();
        g.capturedLoggedAtMillis = in.readLong();
        g.expectedWritten = in.readLong();
        g.expectedRanks = in.readInt();
        g.lastStagedAtMillis = in.readLong();
        g.othersLeftAtCapture = in.readLong();
        g.prediction = SnapshotData.readEvent(in, Event.PredictionMade.class);
        int predictions = in.readInt();
        if (predictions >= 0) { // -1: none, as earlier coordinators of this form wrote it
            for (int i = SnapshotData.count(in, predictions, 12); i > 0; i--) {
                in.readDouble(); // the share it was made at: the forecast's own readShare
                Event.PredictionMade p = SnapshotData.readEvent(in, Event.PredictionMade.class);
                if (p != null) {
                    g.marks.forecast(p);
                }
            }
        }
        g.stagingSoFar = in.readBoolean() ? StagingSoFar.readFrom(in) : null;
        g.marks.readFrom(in);
        g.placement = placement(table, in.readInt());
        g.partnerRanks = in.readInt();
        g.partnerBytes = in.readLong();
        g.rankDetail.captured = SnapshotData.readBits(in);
        g.rankDetail.staged = SnapshotData.readBits(in);
        g.rankDetail.nodeOf = SnapshotData.readInts(in);
        g.rankDetail.bytes = SnapshotData.readLongs(in);
        g.rankDetail.stall = SnapshotData.readDoubles(in);
        g.rankDetail.staging = SnapshotData.readDoubles(in);
        g.rankDetail.bytesByNode = SnapshotData.readLongs(in);
        g.rankDetail.stagingByNode = SnapshotData.readDoubles(in);
        g.rankDetail.nodesCaptured = SnapshotData.readBits(in);
        g.rankDetail.stragglerSpread = in.readDouble();
        return g;
    }
}
