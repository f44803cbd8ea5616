package io.ferry.staging;

import io.ferry.compression.ChunkFormat;
import io.ferry.compression.ChunkHeader;
import io.ferry.compression.CorruptChunkException;
import io.ferry.model.BlobPlace;
import io.ferry.model.ChunkId;
import io.ferry.model.Entry;
import io.ferry.model.ImageRef;
import io.ferry.model.Manifest;
import io.ferry.model.SnapshotMarker;
import io.ferry.staging.crypt.EncryptionKeyException;
import io.ferry.staging.packs.PackFormat;
import io.ferry.staging.packs.PackKeys;
import io.ferry.staging.packs.PackMoves;
import io.ferry.staging.packs.PackResolver;
import io.ferry.stores.StoreException;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Scrubs a store: decodes and verifies every chunk object on the worker pool, then checks
 * that every manifest parses and that every chunk it needs is present and sound, and that
 * every commit marker matches its manifests. Reports, never repairs.
 */
final class StoreVerifier {
    private final Repository repo;
    private final ExecutorService workers;
    private final List<VerifyReport.Problem> problems = Collections.synchronizedList(new ArrayList<>());
    private final Set<ChunkId> sound = ConcurrentHashMap.newKeySet();
    /** Sound pack records: "pack@offset" to the blob id its trailer names and the record's length. */
    private final Map<String, PackRecord> soundRecords = new ConcurrentHashMap<>();
    private final Set<String> packsSeen = ConcurrentHashMap.newKeySet();
    private final PackResolver resolver;

    private record PackRecord(ChunkId id, int length) {}
    private final ThreadLocal<byte[]> raw = ThreadLocal.withInitial(() -> new byte[0]);

    StoreVerifier(Repository repo, ExecutorService workers) {
        this.repo = repo;
        this.workers = workers;
        this.resolver = new PackResolver(repo.store(), packsSeen::contains);
    }

    VerifyReport run(Progress progress) throws IOException {
        List<String> chunkKeys = repo.listChunkKeys();
        AtomicLong bytes = new AtomicLong();
        progress.start("verify chunks", chunkKeys.size(), Progress.Unit.OBJECTS);
        List<CompletableFuture<Void>> tasks = new ArrayList<>();
        for (String key : chunkKeys) {
            tasks.add(CompletableFuture.runAsync(() -> {
                checkChunk(key, bytes);
                progress.advance(1);
            }, workers));
        }
        CompletableFuture.allOf(tasks.toArray(CompletableFuture[]::new)).join();
        progress.finish();
        List<String> packKeys = repo.store().list(PackKeys.PACKS);
        progress.start("verify packs", packKeys.size(), Progress.Unit.OBJECTS);
        tasks.clear();
        AtomicLong records = new AtomicLong();
        for (String key : packKeys) {
            tasks.add(CompletableFuture.runAsync(() -> {
                checkPack(key, bytes, records);
                progress.advance(1);
            }, workers));
        }
        try {
            CompletableFuture.allOf(tasks.toArray(CompletableFuture[]::new)).join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof EncryptionKeyException k) {
                throw new EncryptionKeyException("cannot verify the store: " + k.getMessage());
            }
            throw e;
        } finally {
            progress.finish();
        }
        for (String key : repo.store().list(PackMoves.MOVED)) {
            if (PackMoves.packOf(key).isEmpty()) {
                problem(VerifyReport.Kind.STRAY_OBJECT, key, "not a pack moves object name");
                continue;
            }
            try {
                PackMoves.decode(repo.store().getAtMost(key, ReadLimits.MOVES), key);
            } catch (IllegalArgumentException | StoreException e) {
                problem(VerifyReport.Kind.CORRUPT_CHUNK, key, e.getMessage());
            }
        }

        int manifests = 0;
        int snapshots = 0;
        for (Repository.GenerationListing g : repo.listGenerations()) {
            Map<Integer, String> digests = new HashMap<>();
            for (int rank : g.ranks()) {
                ImageRef ref = new ImageRef(g.job(), g.generation(), rank);
                manifests++;
                try {
                    Repository.StoredManifest sm = repo.readManifest(ref);
                    digests.put(rank, sm.sha256());
                    checkImage(sm.manifest());
                } catch (IOException e) {
                    problem(VerifyReport.Kind.BAD_MANIFEST, Repository.manifestKey(ref), e.getMessage());
                }
            }
            if (g.committed()) {
                snapshots++;
                checkMarker(g, digests);
            }
        }
        List<VerifyReport.Problem> sorted = new ArrayList<>(problems);
        Collections.sort(sorted);
        return new VerifyReport(chunkKeys.size() + records.get(), bytes.get(), manifests, snapshots, sorted);
    }

    private void checkChunk(String key, AtomicLong bytes) {
        Optional<ChunkId> id = Repository.chunkIdOf(key);
        if (id.isEmpty()) {
            problem(VerifyReport.Kind.STRAY_OBJECT, key, "not a chunk object name");
            return;
        }
        try {
            byte[] obj = repo.store().getAtMost(key, ReadLimits.CHUNK);
            bytes.addAndGet(obj.length);
            ChunkHeader h = ChunkFormat.header(obj, obj.length, id.get().toString());
            byte[] out = raw.get();
            if (out.length < h.rawLength()) {
                if (h.rawLength() > Manifest.MAX_CHUNK_SIZE) {
                    throw new CorruptChunkException(id.get().toString(),
                            "raw length " + h.rawLength() + " is too large");
                }
                out = new byte[h.rawLength()];
                raw.set(out);
            }
            ChunkFormat.decode(obj, obj.length, id.get().bytes(), out, id.get().toString());
            sound.add(id.get());
        } catch (CorruptChunkException e) {
            problem(VerifyReport.Kind.CORRUPT_CHUNK, key, e.getMessage());
        } catch (StoreException e) {
            problem(VerifyReport.Kind.CORRUPT_CHUNK, key, "unreadable: " + e.getMessage());
        }
    }

    /** Every record of a pack decoded and checked against the blob its trailer names. */
    private void checkPack(String key, AtomicLong bytes, AtomicLong records) {
        Optional<String> name = PackKeys.nameOf(key);
        if (name.isEmpty()) {
            problem(VerifyReport.Kind.STRAY_OBJECT, key, "not a pack object name");
            return;
        }
        packsSeen.add(name.get());
        try {
            byte[] pack = repo.store().getAtMost(key, ReadLimits.PACK);
            bytes.addAndGet(pack.length);
            List<PackFormat.Record> recs;
            try {
                recs = PackFormat.records(pack, pack.length);
            } catch (IllegalArgumentException e) {
                problem(VerifyReport.Kind.CORRUPT_CHUNK, key, "pack unreadable: " + e.getMessage());
                return;
            }
            for (PackFormat.Record r : recs) {
                records.incrementAndGet();
                String what = "record at " + r.offset() + " (blob " + r.id() + ")";
                try {
                    repo.blobs().check(pack, r.offset(), r.length(), r.id(), what);
                    soundRecords.put(name.get() + "@" + r.offset(), new PackRecord(r.id(), r.length()));
                } catch (CorruptChunkException e) {
                    problem(VerifyReport.Kind.CORRUPT_CHUNK, key, e.getMessage());
                }
            }
        } catch (StoreException e) {
            problem(VerifyReport.Kind.CORRUPT_CHUNK, key, "unreadable: " + e.getMessage());
        } catch (EncryptionKeyException e) {
            // Not damage: a record this configuration cannot open is neither sound nor corrupt. Reporting it
            // as damage would have --repair quarantine sound packs; the whole scrub stops instead, in one line.
            throw new CompletionException(new EncryptionKeyException(
                    key + " " + e.getMessage()));
        }
    }

    private void checkImage(Manifest m) {
        for (Entry e : m.entries()) {
            if (e instanceof Entry.RegularFile f && f.inPacks()) {
                for (int i = 0; i < f.chunks().size(); i++) {
                    BlobPlace p = f.places().get(i);
                    if (p.isZero()) {
                        continue;
                    }
                    String pack = m.packs().get(p.pack());
                    PackResolver.Place at;
                    try {
                        at = resolver.resolve(pack, p.offset(), p.recordLength()); // where gc moved it, if it did
                    } catch (IOException | IllegalArgumentException bad) {
                        problem(VerifyReport.Kind.DAMAGED_IMAGE, m.image().toString(),
                                "file '" + f.path() + "' blob " + i
                                + ": the moves of pack " + pack + " cannot be read: " + bad.getMessage());
                        continue;
                    }
                    pack = at.pack();
                    PackRecord r = soundRecords.get(at.pack() + "@" + at.offset());
                    if (r == null || !r.id().equals(f.chunks().get(i)) || r.length() != at.recordLength()) {
                        problem(VerifyReport.Kind.DAMAGED_IMAGE, m.image().toString(),
                                "file '" + f.path() + "' blob " + i
                                + " (" + f.chunks().get(i) + ") in pack " + pack + " at " + at.offset() + " is "
                                + (!packsSeen.contains(pack) ? "missing: no such pack" : r == null
                                        ? "corrupt or not a record"
                                : "not the blob the pack holds there"));
                    }
                }
            } else if (e instanceof Entry.RegularFile f) {
                for (int i = 0; i < f.chunks().size(); i++) {
                    ChunkId c = f.chunks().get(i);
                    if (!c.isZero() && !sound.contains(c)) {
                        problem(VerifyReport.Kind.DAMAGED_IMAGE, m.image().toString(), "file '" + f.path() + "' chunk "
                                + i + " (" + c + ") is " + (present(c) ? "corrupt" : "missing"));
                    }
                }
            }
        }
    }

    private void checkMarker(Repository.GenerationListing g, Map<Integer, String> digests) {
        String key = Repository.markerKey(g.job(), g.generation());
        try {
            Optional<SnapshotMarker> marker = repo.readMarker(g.job(), g.generation());
            if (marker.isEmpty()) {
                return;
            }
            for (var en : marker.get().manifestSha256().entrySet()) {
                if (!en.getValue().equals(digests.get(en.getKey()))) {
                    problem(VerifyReport.Kind.BAD_SNAPSHOT, key, "rank " + en.getKey() + " manifest is "
                            + (digests.containsKey(en.getKey()) ? "not the one committed" : "missing or unreadable"));
                }
            }
        } catch (IOException e) {
            problem(VerifyReport.Kind.BAD_SNAPSHOT, key, e.getMessage());
        }
    }

    private boolean present(ChunkId c) {
        try {
            return repo.store().exists(Repository.chunkKey(c));
        } catch (StoreException e) {
            return false;
        }
    }

    private void problem(VerifyReport.Kind kind, String key, String detail) {
        problems.add(new VerifyReport.Problem(kind, key, detail));
    }
}
