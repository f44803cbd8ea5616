package io.ferry.agent.capture;

import com.sun.jna.LastErrorException;
import io.ferry.agent.capture.internal.Libc;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * What a {@code criu} image carries beside CRIU's own files, and putting it back:
 * <ul>
 * <li>{@value #STREAMS}: one line {@code FD NAME} for the root's descriptors 0-2, as
 *     {@code /proc/PID/fd} names them ({@code pipe:[INODE]} for the pipes the agent owns), so
 *     a restore can hand new pipes in their place;</li>
 * <li>{@value #FILE_LIST} and {@value #FILES}{@code /N}: one line {@code N PATH} per regular
 *     file some process of the tree had open for writing at the dump, and its content then.
 *     CRIU records only such a file's size, and refuses a restore once it changed, except for a
 *     file open write-only with {@code O_APPEND}, which it reopens as it finds it (the lines
 *     written after the dump would be there twice once the rank writes them again). Ferry puts
 *     the content back first, so the file rolls back with the process (as DMTCP's
 *     {@code --ckpt-open-files} does).</li>
 * <li>{@value #PIDS}: the pids of the dumped tree, one a line: CRIU restores every process
 *     under its own pid, so a restore first waits for them to be free.</li>
 * </ul>
 * Files written and closed before the dump are not rolled back. Stateless.
 */
final class CriuFiles {
    static final String STREAMS = "ferry-streams.txt";
    static final String FILE_LIST = "ferry-files.txt";
    static final String FILES = "ferry-files";
    static final String PIDS = "ferry-pids.txt";
    private static final int O_ACCMODE = 3;

    private CriuFiles() {
    }

    static void recordStreams(long pid, Path imageDir) throws IOException {
        StringBuilder s = new StringBuilder();
        for (int fd = 0; fd <= 2; fd++) {
            try {
                s.append(fd).append(' ').append(Files.readSymbolicLink(Path.of("/proc", Long.toString(pid), "fd",
                        Integer.toString(fd)))).append('\n');
            } catch (NoSuchFileException closed) {
                // a closed standard stream: nothing to hand back
            }
        }
        Files.writeString(imageDir.resolve(STREAMS), s);
    }

    /** The {@link #STREAMS} of an image: descriptor to name; empty for an image without them. */
    static Map<Integer, String> streams(Path imageDir) throws IOException {
        Map<Integer, String> out = new TreeMap<>();
        Path f = imageDir.resolve(STREAMS);
        if (Files.exists(f)) {
            for (String line : Files.readAllLines(f)) {
                int sp = line.indexOf(' ');
                if (sp > 0) {
                    out.put(Integer.parseInt(line.substring(0, sp)), line.substring(sp + 1));
                }
            }
        }
        return out;
    }

    /**
     * Copies every regular file the stopped tree of {@code root} has open for writing into the
     * image, and records the tree's pids.
     */
    static void saveWritten(long root, Path imageDir) throws IOException {
        Map<Path, Integer> saved = new LinkedHashMap<>();
        List<Long> pids = tree(root);
        StringBuilder pidList = new StringBuilder();
        pids.forEach(p -> pidList.append(p).append('\n'));
        Files.writeString(imageDir.resolve(PIDS), pidList);
        for (long pid : pids) {
            Path fds = Path.of("/proc", Long.toString(pid), "fd");
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(fds)) {
                for (Path fd : ds) {
                    Path file;
                    try {
                        file = Files.readSymbolicLink(fd);
                    } catch (IOException closed) {
                        continue;
                    }
                    // An unlinked file reads "PATH (deleted)" and is no regular file there: CRIU keeps it itself.
                    if (!file.isAbsolute() || saved.containsKey(file) || !Files.isRegularFile(file)
                            || !writable(pid, fd.getFileName().toString())) {
                        continue;
                    }
                    if (file.toString().indexOf('\n') >= 0) {
                        throw new IOException("process " + pid + " writes a file whose name holds a newline, which "
                                + FILE_LIST + " cannot record: " + file);
                    }
                    int n = saved.size();
                    Files.createDirectories(imageDir.resolve(FILES));
                    Files.copy(file, imageDir.resolve(FILES).resolve(Integer.toString(n)));
                    saved.put(file, n);
                }
            } catch (NoSuchFileException gone) {
                // that process ended between the listing and here: it is not in the image either
            }
        }
        StringBuilder list = new StringBuilder();
        saved.forEach((file, n) -> list.append(n).append(' ').append(file).append('\n'));
        Files.writeString(imageDir.resolve(FILE_LIST), list, StandardCharsets.UTF_8);
    }

    private static boolean writable(long pid, String fd) throws IOException {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "fdinfo", fd))) {
                if (line.startsWith("flags:")) {
                    return (Integer.parseInt(line.substring(6).trim(), 8) & O_ACCMODE) != 0;
                }
            }
        } catch (NoSuchFileException closed) {
            return false;
        }
        return false;
    }

    /** Puts the files an image carries back at their paths, as they were at the dump. */
    static void putBack(Path imageDir) throws IOException {
        Path list = imageDir.resolve(FILE_LIST);
        if (!Files.exists(list)) {
            return;
        }
        for (String line : Files.readAllLines(list, StandardCharsets.UTF_8)) {
            int sp = line.indexOf(' ');
            if (sp <= 0) {
                continue;
            }
            Path file = Path.of(line.substring(sp + 1));
            Files.createDirectories(file.getParent());
            Files.copy(imageDir.resolve(FILES).resolve(line.substring(0, sp)), file,
                    StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /**
     * Waits, up to {@code patience}, until no process holds a pid of the image's tree: a rank
     * killed just before the restore, and its children, may not be reaped yet (orphans are
     * reaped by whoever inherits them, a moment later), and CRIU cannot fork under a taken pid.
     * Returns the pids still taken then (CRIU then fails, saying which).
     */
    static List<Long> awaitPidsFree(Path imageDir, Duration patience) throws IOException {
        Path f = imageDir.resolve(PIDS);
        List<Long> pids = Files.exists(f) ? Files.readAllLines(f).stream().filter(l -> !l.isBlank())
                .map(l -> Long.parseLong(l.trim())).toList() : List.of();
        long until = System.nanoTime() + patience.toNanos();
        while (true) {
            List<Long> taken = pids.stream().filter(p -> Files.exists(Path.of("/proc", Long.toString(p)))).toList();
            if (taken.isEmpty() || System.nanoTime() > until) {
                return taken;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted waiting for pids " + taken + " to be free");
            }
        }
    }

    /** SIGCONT to every process of the tree of {@code root} (left stopped by {@code criu dump --leave-stopped}). */
    static void resume(long root) {
        for (long pid : tree(root)) {
            try {
                Libc.kill((int) pid, Libc.SIGCONT);
            } catch (LastErrorException gone) {
                // ended meanwhile: nothing to resume
            }
        }
    }

    private static List<Long> tree(long root) {
        List<Long> pids = new ArrayList<>(List.of(root));
        ProcessHandle.of(root).ifPresent(h -> {
            try (Stream<ProcessHandle> d = h.descendants()) {
                d.forEach(c -> pids.add(c.pid()));
            }
        });
        return pids;
    }
}
