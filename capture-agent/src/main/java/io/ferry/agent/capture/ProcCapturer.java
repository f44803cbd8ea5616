package io.ferry.agent.capture;

import io.ferry.agent.capture.internal.ElfCore;
import io.ferry.agent.capture.internal.Freezer;
import io.ferry.agent.capture.internal.MemoryCopier;
import io.ferry.agent.capture.internal.ProcFs;
import io.ferry.agent.capture.internal.Registers;
import io.ferry.agent.capture.internal.SparseFile;
import io.ferry.staging.Progress;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The {@code proc} method: freezes the process (its whole group where that is safe), reads
 * its maps, threads and registers, streams every readable region out with
 * {@code process_vm_readv} into one sparse ELF core file per process ({@code core.<pid>},
 * which gdb opens), thaws it, and only then fsyncs. The stall is freeze to thaw. Restoring
 * needs an external restorer. Stateless and thread-safe.
 */
public final class ProcCapturer implements Capturer {
    /**
     * Memory a capture may hold to thaw the process before its core is written, unless set:
     * a process up to this size stalls only for the copy out of it; a larger one also for
     * writing what does not fit. Never over a quarter of MemAvailable.
     */
    public static final long DEFAULT_BUFFER_BYTES = 1L << 30;
    /** How long a freeze waits for every thread to stop. */
    public static final Duration STOP_PATIENCE = Duration.ofSeconds(10);
    /** The file beside the cores that says what was captured. */
    public static final String DESCRIPTION = "proc-capture.json";

    /** One proc capture in detail. */
    public record Result(List<Long> pids, boolean wholeGroup, int threads, Duration stall, long memoryBytes,
                         long copiedBytes, long zeroBytes, long unreadableBytes, long fileBytes) {
        public Captured captured() {
            return new Captured(stall, fileBytes, String.format(Locale.ROOT,
                    "%s pid %s, %d threads, %.1f MiB memory: %.1f MiB copied (%.1f MiB zero pages"
                            + " left as holes), stall %.3f s",
                    wholeGroup ? "process group of" : "process", pids, threads, memoryBytes / 1048576.0,
                    copiedBytes / 1048576.0, zeroBytes / 1048576.0, stall.toNanos() / 1e9));
        }
    }

    private final long bufferBytes;

    public ProcCapturer() {
        this(DEFAULT_BUFFER_BYTES);
    }

    /** With a capture buffer of {@code bufferBytes} (at least 16 MiB are used). */
    public ProcCapturer(long bufferBytes) {
        if (bufferBytes < 0) {
            throw new IllegalArgumentException("capture buffer must be >= 0, got " + bufferBytes);
        }
        this.bufferBytes = bufferBytes;
    }

    @Override
    public String method() {
        return "proc";
    }

    @Override
    public Optional<String> unavailable() {
        try {
            Registers.requireSupported();
            return Optional.empty();
        } catch (UnsupportedOperationException e) {
            return Optional.of(e.getMessage());
        }
    }

    /** {@code setsid -w -f}: its own process group (freezing it cannot stop Ferry), and a grandchild of Ferry. */
    @Override
    public List<String> launchCommand(List<String> command, Path rankDir) {
        List<String> out = new ArrayList<>(List.of("setsid", "-w", "-f"));
        out.addAll(command);
        return out;
    }

    @Override
    public Optional<Long> target(long launchedPid) {
        return ProcessHandle.of(launchedPid).flatMap(h -> h.children().findFirst()).map(ProcessHandle::pid);
    }

    @Override
    public Captured capture(long pid, Path rankDir, Path dir, Progress progress) throws IOException {
        return dump(pid, dir, progress).captured();
    }

    @Override
    public Optional<List<String>> restartCommand(Path imageDir) {
        return Optional.empty();
    }

    /** As {@link #capture}, with every figure of the capture. */
    public Result dump(long pid, Path dir, Progress progress) throws IOException {
        return dump(pid, dir, progress, null);
    }

    /**
     * As {@link #dump(long, Path, Progress)}, also handing every copied piece to {@code tap}
     * (on the writer thread, while the process is frozen) for a consumer that wants the bytes
     * as they are read, e.g. a chunker; null for none.
     */
    public Result dump(long pid, Path dir, Progress progress, MemoryCopier.Sink tap) throws IOException {
        Registers.requireSupported();
        if (Files.exists(dir)) {
            throw new IllegalArgumentException("output directory " + dir + " already exists: give a new one");
        }
        if (pid == ProcessHandle.current().pid()) {
            throw new IllegalArgumentException("Ferry cannot capture itself (pid " + pid + ")");
        }
        Result[] r = new Result[1];
        try {
            ImageDirs.fill(dir, partial -> {
                r[0] = dumpInto((int) pid, partial, progress, tap);
                Files.writeString(partial.resolve(DESCRIPTION), describe(r[0]), StandardCharsets.UTF_8);
            });
        } catch (NoSuchFileException gone) {
            throw new ProcessGoneException((int) pid);
        } catch (AccessDeniedException denied) { // /proc/<pid>/maps, auxv...: ptrace access mode
            throw new IOException("permission denied to read the memory of process " + pid
                    + ": capture it as its owner or as root (CAP_SYS_PTRACE and CAP_KILL)", denied);
        }
        return r[0];
    }

    private Result dumpInto(int pid, Path dir, Progress progress, MemoryCopier.Sink tap) throws IOException {
        if (!Files.isDirectory(ProcFs.dir(pid))) {
            throw new IOException("no process " + pid);
        }
        long memory = 0;
        long copied = 0;
        long unreadable = 0;
        long fileBytes = 0;
        int threads = 0;
        List<Long> pids = new ArrayList<>();
        List<SparseFile> files = new ArrayList<>();
        boolean group;
        // Sized on the maps before the freeze, allocated and touched before the freeze.
        long wanted = ProcFs.maps(pid).stream().filter(ProcFs.Region::copied).mapToLong(ProcFs.Region::size).sum();
        Freezer frozen;
        try (MemoryCopier copier = new MemoryCopier(Math.min(bufferBytes(), wanted + MemoryCopier.PIECE))) {
            frozen = Freezer.freeze(pid, STOP_PATIENCE);
            try (frozen) {
                group = frozen.wholeGroup();
                List<ElfCore> cores = new ArrayList<>();
                for (int p : frozen.members()) {
                    if (p != pid && !capturable(p)) {
                        // a member that exited just before the stop (a zombie its frozen parent has not reaped)
                        continue;
                    }
                    List<Registers.Thread> regs;
                    List<ProcFs.Region> maps;
                    try {
                        regs = Registers.read(p, ProcFs.threads(p));
                        maps = ProcFs.maps(p);
                    } catch (IOException e) {
                        if (p != pid && exiting(e)) {
                            // a member already in exit when stopped: its memory is gone, it is not part of the image
                            continue;
                        }
                        throw e;
                    }
                    cores.add(new ElfCore(maps, ElfCore.describe(p, regs)));
                    threads += regs.size();
                    pids.add((long) p);
                }
                long total = cores.stream().flatMap(c -> c.regions().stream()).filter(ProcFs.Region::copied)
                        .mapToLong(ProcFs.Region::size).sum();
                progress.start("capture pid " + pid, total, Progress.Unit.BYTES);
                for (int i = 0; i < cores.size(); i++) {
                    ElfCore core = cores.get(i);
                    memory += core.regions().stream().mapToLong(ProcFs.Region::size).sum();
                    SparseFile out = new SparseFile(dir.resolve("core." + pids.get(i)), core.size());
                    files.add(out);
                    out.writeAll(core.head(), 0);
                    MemoryCopier.Copied c = copier.read(pids.get(i).intValue(), core.regions(), core.offsets(),
                            (bytes, at) -> {
                        int n = bytes.remaining();
                        if (tap != null) {
                            tap.write(bytes.duplicate(), at);
                        }
                        out.write(bytes, at);
                        progress.advance(n);
                    });
                    copied += c.bytes();
                    unreadable += c.unreadable();
                    fileBytes += core.size();
                }
            } // thawed: everything is read; what the buffers still hold is written below
            copier.finish();
        } finally {
            progress.finish();
            for (SparseFile f : files) {
                f.close();
            }
        }
        long zero = files.stream().mapToLong(SparseFile::zeroBytes).sum();
        return new Result(pids, group, threads, frozen.stall(), memory, copied, zero, unreadable, fileBytes);
    }

    /**
     * True for what reading a process in exit gives: ESRCH from ptrace, or from reading its
     * /proc files (the JDK reports that errno only by its text), or the files gone.
     */
    private static boolean exiting(IOException e) {
        return e instanceof ProcessGoneException || ProcFs.gone(e);
    }

    private static boolean capturable(int p) throws IOException {
        try {
            char state = ProcFs.stat(p).state();
            return state != 'Z' && state != 'X';
        } catch (IOException e) {
            if (ProcFs.gone(e)) {
                return false;
            }
            throw e;
        }
    }

    /** The buffer this capture may use: as configured, but never over a quarter of the memory available now. */
    private long bufferBytes() throws IOException {
        return Math.min(bufferBytes, ProcFs.memAvailable() / 4);
    }

    private static String describe(Result r) {
        return String.format(Locale.ROOT, "{\"method\":\"proc\",\"pids\":%s,\"wholeGroup\":%s,"
                        + "\"threads\":%d,\"stallSeconds\":%.6f,\"memoryBytes\":%d,\"copiedBytes\":%d,"
                        + "\"zeroBytes\":%d,\"unreadableBytes\":%d,\"restore\":\"needs an external"
                        + " restorer: Ferry writes ELF cores for gdb, not restartable images\"}%n",
                r.pids(), r.wholeGroup(), r.threads(), r.stall().toNanos() / 1e9, r.memoryBytes(), r.copiedBytes(),
                r.zeroBytes(), r.unreadableBytes());
    }

    @Override
    public boolean restores() {
        return false;
    }
}
