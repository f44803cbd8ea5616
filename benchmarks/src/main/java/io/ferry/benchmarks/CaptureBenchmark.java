package io.ferry.benchmarks;

import com.sun.jna.LastErrorException;
import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import io.ferry.agent.capture.ProcCapturer;
import io.ferry.agent.capture.internal.Libc;
import io.ferry.agent.capture.internal.MemoryCopier;
import io.ferry.agent.capture.internal.ProcFs;
import io.ferry.compression.ChunkFormat;
import io.ferry.compression.Codecs;
import io.ferry.compression.Digests;
import io.ferry.model.ChunkId;
import io.ferry.model.ImageRef;
import io.ferry.model.Sizes;
import io.ferry.staging.Progress;
import io.ferry.staging.Repository;
import io.ferry.staging.Staging;
import io.ferry.staging.StagingConfig;
import io.ferry.staging.StagingPipeline;
import io.ferry.staging.internal.FileTrees;
import io.ferry.stores.Store;
import io.ferry.stores.Stores;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;

/**
 * Stall and throughput of {@code proc} capture on live C processes of several sizes, beside
 * the limit of this machine (one {@code process_vm_readv} copy of the same regions into a
 * buffer, nothing written) and beside gdb's {@code gcore} on the same process, in the same
 * run; then the two ways to get a capture into the chunk store: dump to the cache file and
 * push it (two passes), or hash, compress and store every piece while the process is still
 * frozen (streaming). Median of three runs each, after one capture not counted (the JIT's
 * warm-up: an agent captures every interval). The stall is SIGSTOP to SIGCONT. Prints
 * Markdown tables.
 */
public final class CaptureBenchmark {
    private static final int RUNS = 3;

    private CaptureBenchmark() {}

    public static void main(String[] args) throws Exception {
        Path victim = Path.of(args[0]).toAbsolutePath();
        Path work = Path.of(args[1]).toAbsolutePath();
        List<Long> sizes = new ArrayList<>();
        for (String s : (args.length > 2 ? args[2] : "256MiB,1GiB,2GiB").split(",")) {
            sizes.add(Sizes.parse(s));
        }
        long buffer = args.length > 3 ? Sizes.parse(args[3]) : ProcCapturer.DEFAULT_BUFFER_BYTES;
        ProcCapturer proc = new ProcCapturer(buffer);
        FileTrees.delete(work);
        Files.createDirectories(work);
        List<String> capture = new ArrayList<>();
        List<String> staging = new ArrayList<>();
        for (long size : sizes) {
            try (Victim v = new Victim(victim, size)) {
                // One capture first, not counted: an agent captures every interval, so its code is compiled.
                FileTrees.delete(proc.dump(v.pid, work.resolve("warm-up"), Progress.NONE) != null
                        ? work.resolve("warm-up") : work);
                double limit = median(() -> limit(v.pid, true));
                double hot = median(() -> limit(v.pid, false));
                double[] ferry = new double[RUNS];
                double[] ferryTotal = new double[RUNS];
                ProcCapturer.Result last = null;
                for (int i = 0; i < RUNS; i++) {
                    Path out = work.resolve("ferry-" + i);
                    long t0 = System.nanoTime();
                    last = proc.dump(v.pid, out, Progress.NONE);
                    ferryTotal[i] = (System.nanoTime() - t0) / 1e9;
                    ferry[i] = last.stall().toNanos() / 1e9;
                    FileTrees.delete(out);
                }
                double gcore = median(() -> gcore(v.pid, work.resolve("gcore")));
                double stall = med(ferry);
                capture.add(String.format(Locale.ROOT,
                        "| %s | %.1f | %.3f | %.3f | %.3f | %.2fx | %.2fx | %.3f | %.3f | %.2fx |",
                        Sizes.format(size), last.memoryBytes() / 1048576.0, limit, hot, stall, stall / limit,
                        stall / hot, med(ferryTotal), gcore, gcore / stall));
                staging.add(twoWays(proc, v.pid, size, work));
            }
        }
        System.out.printf(Locale.ROOT, "%nproc capture of an idle C process (half its heap a pattern, half zero pages),"
                + " %d cores, capture buffer %s, median of %d%n%n", Runtime.getRuntime().availableProcessors(),
                Sizes.format(buffer), RUNS);
        System.out.println("| heap | memory MiB | memory-copy limit s | cache-hot copy s | Ferry stall s"
                + " | stall / limit | stall / cache-hot | Ferry with fsync s | gcore s | Ferry stall vs gcore |");
        System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        capture.forEach(System.out::println);
        System.out.println();
        System.out.println("| heap | two-pass stall s | two-pass pushed after s"
                + " | streaming stall s | streaming pushed after s |");
        System.out.println("|---|---:|---:|---:|---:|");
        staging.forEach(System.out::println);
    }

    /**
     * The machine's limit: every copied region through {@code process_vm_readv} into memory,
     * nothing else. {@code keep}: into buffers as large as the regions, touched beforehand (the
     * bytes are kept, as a capture must); otherwise into one 4 MiB buffer used over and over,
     * which stays in the CPU cache (a copy that keeps nothing: a lower bound).
     */
    private static double limit(long pid, boolean keep) throws IOException {
        List<ProcFs.Region> regions = ProcFs.maps((int) pid);
        long total = regions.stream().filter(ProcFs.Region::copied).mapToLong(ProcFs.Region::size).sum();
        List<Memory> bufs = new ArrayList<>();
        for (long n = 0; n < (keep ? total : 1); n += MemoryCopier.PIECE) {
            Memory m = new Memory(MemoryCopier.PIECE);
            m.clear();
            bufs.add(m);
        }
        try (Memory iov = new Memory(32)) {
            int next = 0;
            long t0 = System.nanoTime();
            for (ProcFs.Region r : regions) {
                if (!r.copied()) {
                    continue;
                }
                for (long at = r.start(); at < r.end(); ) {
                    int want = (int) Math.min(MemoryCopier.PIECE, r.end() - at);
                    iov.setPointer(0, bufs.get(next++ % bufs.size()));
                    iov.setLong(8, want);
                    iov.setPointer(16, new Pointer(at));
                    iov.setLong(24, want);
                    long got;
                    try {
                        got = Libc.process_vm_readv((int) pid, iov, 1, iov.share(16), 1, 0);
                    } catch (LastErrorException e) {
                        got = 0;
                    }
                    at += got < want ? Math.max(got, 0) + 4096 - (at + got) % 4096 : got;
                }
            }
            return (System.nanoTime() - t0) / 1e9;
        } finally {
            bufs.forEach(Memory::close);
        }
    }

    private static double gcore(long pid, Path prefix) throws Exception {
        long t0 = System.nanoTime();
        Process p = new ProcessBuilder("gcore", "-o", prefix.toString(), Long.toString(pid))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        if (p.waitFor() != 0) {
            throw new IOException("gcore failed on " + pid);
        }
        double s = (System.nanoTime() - t0) / 1e9;
        Files.deleteIfExists(Path.of(prefix + "." + pid));
        return s;
    }

    /** Two-pass (dump, thaw, push the file) against streaming (hash, compress, store while frozen). */
    private static String twoWays(ProcCapturer proc, long pid, long size, Path work) throws Exception {
        double[] twoStall = new double[RUNS];
        double[] twoTotal = new double[RUNS];
        double[] streamStall = new double[RUNS];
        double[] streamTotal = new double[RUNS];
        for (int i = 0; i < RUNS; i++) {
            Path storeDir = work.resolve("store-" + i);
            try (Store store = Stores.open(storeDir.toUri(), Map.of());
                 StagingPipeline pipeline = Staging.pipeline(store, StagingConfig.defaults(), Clock.systemUTC())) {
                long t0 = System.nanoTime();
                ProcCapturer.Result r = proc.dump(pid, work.resolve("two"), Progress.NONE);
                pipeline.push(work.resolve("two"), new ImageRef("bench", i, 0), Progress.NONE);
                twoTotal[i] = (System.nanoTime() - t0) / 1e9;
                twoStall[i] = r.stall().toNanos() / 1e9;
            }
            FileTrees.delete(storeDir);
            FileTrees.delete(work.resolve("two"));
            try (Store store = Stores.open(storeDir.toUri(), Map.of());
                 StreamingChunker chunker = new StreamingChunker(store)) {
                long t0 = System.nanoTime();
                ProcCapturer.Result r = proc.dump(pid, work.resolve("stream"), Progress.NONE, chunker);
                chunker.awaitAll();
                streamTotal[i] = (System.nanoTime() - t0) / 1e9;
                streamStall[i] = r.stall().toNanos() / 1e9;
            }
            FileTrees.delete(storeDir);
            FileTrees.delete(work.resolve("stream"));
        }
        return String.format(Locale.ROOT, "| %s | %.3f | %.3f | %.3f | %.3f |", Sizes.format(size), med(twoStall),
                med(twoTotal), med(streamStall), med(streamTotal));
    }

    /**
     * The chunk path (zero test, SHA-256, zstd, durable put) fed straight from the capture:
     * each piece is copied off the capture buffer and handed to the workers; at most four in
     * flight, so a slow chunker slows the capture, as streaming must.
     */
    private static final class StreamingChunker implements MemoryCopier.Sink, AutoCloseable {
        private final Store store;
        private final ChunkFormat format = new ChunkFormat(Codecs.zstd(StagingConfig.defaults().zstdLevel()),
                StagingConfig.defaults().minRatio());
        private final ExecutorService workers = Executors.newFixedThreadPool(StagingConfig.defaults().workers());
        private final Semaphore inFlight = new Semaphore(4);
        private final List<CompletableFuture<Void>> all = new ArrayList<>();

        StreamingChunker(Store store) {
            this.store = store;
        }

        @Override
        public void write(ByteBuffer bytes, long fileOffset) throws IOException {
            byte[] raw = new byte[bytes.remaining()];
            bytes.get(raw);
            inFlight.acquireUninterruptibly();
            all.add(CompletableFuture.runAsync(() -> {
                try {
                    if (Arrays.mismatch(raw, new byte[raw.length]) == -1) {
                        return;
                    }
                    ChunkId id = ChunkId.of(Digests.sha256(raw, 0, raw.length));
                    byte[] out = new byte[format.maxObjectLength(raw.length)];
                    int n = format.encode(raw, raw.length, out);
                    store.put(Repository.chunkKey(id), ByteBuffer.wrap(out, 0, n));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                } finally {
                    inFlight.release();
                }
            }, workers));
        }

        void awaitAll() {
            CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).join();
        }

        @Override
        public void close() {
            workers.shutdownNow();
        }
    }

    private interface Measure {
        double run() throws Exception;
    }

    private static double median(Measure m) throws Exception {
        double[] x = new double[RUNS];
        for (int i = 0; i < RUNS; i++) {
            x[i] = m.run();
        }
        return med(x);
    }

    private static double med(double[] x) {
        double[] s = x.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }

    /** victim.c under setsid -w -f, as ferry run launches proc ranks. */
    private static final class Victim implements AutoCloseable {
        final Process wrapper;
        final long pid;

        Victim(Path binary, long size) throws IOException {
            wrapper = new ProcessBuilder(new ProcCapturer().launchCommand(List.of(binary.toString(),
                    Long.toString(size >> 20), "0", "idle"), null))
                    .redirectError(ProcessBuilder.Redirect.INHERIT).start();
            String ready = new BufferedReader(new InputStreamReader(wrapper.getInputStream())).readLine();
            if (ready == null || !ready.startsWith("ready")) {
                throw new IOException("victim did not start");
            }
            pid = new ProcCapturer().target(wrapper.pid()).orElseThrow();
        }

        @Override
        public void close() {
            ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
            wrapper.destroyForcibly();
        }
    }
}
