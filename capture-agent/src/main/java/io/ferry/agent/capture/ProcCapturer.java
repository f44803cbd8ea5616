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
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The {@code proc} method: freezes the process (its whole group where that is safe), reads
 * its maps, threads and registers, streams every readable region out with
 * {@code process_vm_readv} into one sparse ELF core file per process ({@code core.<pid>},
 * which gdb opens), thaws it, and only then fsyncs. The stall is freeze to thaw. Restoring
 * needs an external restorer. Stateless and thread-safe.
 */
public final class ProcCapturer implements Capturer {
    /** How long a freeze waits for every thread to stop. */
    public static final Duration STOP_PATIENCE = Duration.ofSeconds(10);
    /** The file beside the cores that says what was captured. */
    public static final String DESCRIPTION = "proc-capture.json";

    /** One proc capture in detail. */
    public record Result(List<Long> pids, boolean wholeGroup, int threads, Duration stall, long memoryBytes,
                         long copiedBytes, long zeroBytes, long unreadableBytes, long fileBytes) {
        public Captured captured() {
            return new Captured(stall, fileBytes, String.format(java.util.Locale.ROOT,
                    "%s pid %s, %d threads, %.1f MiB memory: %.1f MiB copied (%.1f MiB zero pages left as holes), stall %.3f s",
                    wholeGroup ? "process group of" : "process", pids, threads, memoryBytes / 1048576.0,
                    copiedBytes / 1048576.0, zeroBytes / 1048576.0, stall.toNanos() / 1e9));
        }
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
                r[0] = dumpInto((int) pid, partial, progress);
                Files.writeString(partial.resolve(DESCRIPTION), describe(r[0]), StandardCharsets.UTF_8);
            });
        } catch (NoSuchFileException gone) {
            throw new ProcessGoneException((int) pid);
        }
        return r[0];
    }

    private Result dumpInto(int pid, Path dir, Progress progress) throws IOException {
        if (!Files.isDirectory(ProcFs.dir(pid))) {
            throw new IOException("no process " + pid);
        }
        long memory = 0;
        long copied = 0;
        long zero = 0;
        long unreadable = 0;
        long fileBytes = 0;
        int threads = 0;
        List<Long> pids = new ArrayList<>();
        long t0 = System.nanoTime();
        boolean group;
        try (Freezer frozen = Freezer.freeze(pid, STOP_PATIENCE)) {
            group = frozen.wholeGroup();
            List<ElfCore> cores = new ArrayList<>();
            for (int p : frozen.members()) {
                List<Registers.Thread> regs = Registers.read(p, ProcFs.threads(p));
                cores.add(new ElfCore(ProcFs.maps(p), ElfCore.describe(p, regs)));
                threads += regs.size();
                pids.add((long) p);
            }
            long total = cores.stream().flatMap(c -> c.regions().stream()).filter(ProcFs.Region::copied)
                    .mapToLong(ProcFs.Region::size).sum();
            progress.start("capture pid " + pid, total, Progress.Unit.BYTES);
            for (int i = 0; i < cores.size(); i++) {
                ElfCore core = cores.get(i);
                memory += core.regions().stream().mapToLong(ProcFs.Region::size).sum();
                try (SparseFile out = new SparseFile(dir.resolve("core." + pids.get(i)), core.size())) {
                    out.writeAll(core.head(), 0);
                    long[] offsets = new long[core.regions().size()];
                    for (int k = 0; k < offsets.length; k++) {
                        offsets[k] = core.offset(k);
                    }
                    MemoryCopier.Copied c = MemoryCopier.copy(pids.get(i).intValue(), core.regions(), offsets,
                            (bytes, at) -> {
                                int n = bytes.remaining();
                                out.write(bytes, at);
                                progress.advance(n);
                            });
                    copied += c.bytes();
                    unreadable += c.unreadable();
                    zero += out.zeroBytes();
                    fileBytes += core.size();
                }
            }
        } finally {
            progress.finish();
        }
        Duration stall = Duration.ofNanos(System.nanoTime() - t0);
        return new Result(pids, group, threads, stall, memory, copied, zero, unreadable, fileBytes);
    }

    private static String describe(Result r) {
        return String.format(java.util.Locale.ROOT, "{\"method\":\"proc\",\"pids\":%s,\"wholeGroup\":%s,\"threads\":%d,"
                        + "\"stallSeconds\":%.6f,\"memoryBytes\":%d,\"copiedBytes\":%d,\"zeroBytes\":%d,\"unreadableBytes\":%d,"
                        + "\"restore\":\"needs an external restorer: Ferry writes ELF cores for gdb, not restartable images\"}%n",
                r.pids(), r.wholeGroup(), r.threads(), r.stall().toNanos() / 1e9, r.memoryBytes(), r.copiedBytes(),
                r.zeroBytes(), r.unreadableBytes());
    }

    @Override
    public boolean restores() {
        return false;
    }
}
