package io.ferry.agent.capture.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads what {@code proc} capture needs from {@code /proc}: memory maps, threads and their
 * states, process-group members, and the fields of {@code stat} and {@code status}. A
 * process that vanished while being read surfaces as {@link NoSuchFileException}, or as an
 * {@code IOException} of ESRCH when it went between an open and a read: {@link #gone} tells both.
 * Stateless and thread-safe.
 */
public final class ProcFs {
    private static final Path PROC = Path.of("/proc");

    private ProcFs() {
    }

    /** One line of {@code /proc/<pid>/maps}. {@code path} is empty for anonymous memory. */
    public record Region(long start, long end, String perms, long offset, String dev, long inode, String path) {
        public long size() {
            return end - start;
        }

        public boolean readable() {
            return perms.charAt(0) == 'r';
        }

        public boolean fileBacked() {
            return path.startsWith("/") && inode != 0;
        }

        /**
         * Whether capture should copy this region: readable, and not a kernel window that
         * cannot be read ({@code [vsyscall]}, {@code [vvar]}) or a device mapping, which the
         * kernel's own core dumps skip too.
         */
        public boolean copied() {
            return readable() && !path.equals("[vsyscall]") && !path.startsWith("[vvar")
                    && !(path.startsWith("/dev/") && !path.startsWith("/dev/shm/") && !path.startsWith("/dev/zero"));
        }

        static Region parse(String line) {
            // start-end perms offset dev inode [path], the path may hold spaces
            String[] f = line.trim().split("\\s+", 6);
            if (f.length < 5) {
                throw new IllegalArgumentException("unexpected line in maps: " + line);
            }
            int dash = f[0].indexOf('-');
            return new Region(Long.parseUnsignedLong(f[0], 0, dash, 16), Long.parseUnsignedLong(f[0], dash + 1,
                    f[0].length(), 16), f[1], Long.parseUnsignedLong(f[2], 16), f[3], Long.parseLong(f[4]),
                    f.length == 6 ? f[5] : "");
        }
    }

    /** The fields of {@code /proc/<pid>/stat} (or a task's) that a core file records. */
    public record Stat(int pid, String comm, char state, int ppid, int pgrp, int session, long flags, long utimeTicks,
                       long stimeTicks, int nice) {
        static Stat parse(String text) {
            int open = text.indexOf('(');
            int close = text.lastIndexOf(')'); // comm may itself hold ')' or spaces
            String[] f = text.substring(close + 2).trim().split(" ");
            // f[0] is field 3 (state) of proc(5)
            return new Stat(Integer.parseInt(text.substring(0, open).trim()), text.substring(open + 1, close),
                    f[0].charAt(0), Integer.parseInt(f[1]), Integer.parseInt(f[2]), Integer.parseInt(f[3]),
                    Long.parseUnsignedLong(f[6]), Long.parseLong(f[11]), Long.parseLong(f[12]),
                    Integer.parseInt(f[16]));
        }

        /** Stopped by a signal or by a tracer, or already gone: either way it runs no more. */
        public boolean halted() {
            return state == 'T' || state == 't' || state == 'Z' || state == 'X';
        }
    }

    public static List<Region> maps(int pid) throws IOException {
        List<Region> out = new ArrayList<>();
        for (String line : Files.readAllLines(PROC.resolve(pid + "/maps"), StandardCharsets.UTF_8)) {
            if (!line.isBlank()) {
                out.add(Region.parse(line));
            }
        }
        return out;
    }

    public static Stat stat(int pid) throws IOException {
        return Stat.parse(Files.readString(PROC.resolve(pid + "/stat"), StandardCharsets.UTF_8));
    }

    public static Stat taskStat(int pid, int tid) throws IOException {
        return Stat.parse(Files.readString(PROC.resolve(pid + "/task/" + tid + "/stat"), StandardCharsets.UTF_8));
    }

    /** Thread ids of {@code pid}, the main thread (tid = pid) first. */
    public static List<Integer> threads(int pid) throws IOException {
        List<Integer> out = new ArrayList<>();
        out.add(pid);
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(PROC.resolve(pid + "/task"))) {
            for (Path p : ds) {
                int tid = Integer.parseInt(p.getFileName().toString());
                if (tid != pid) {
                    out.add(tid);
                }
            }
        }
        return out;
    }

    /**
     * Whether reading a process's {@code /proc} file failed because the process exited: its directory was gone at the
     * open ({@link NoSuchFileException}), or it went between the open and the read, which fails with ESRCH.
     */
    public static boolean gone(IOException e) {
        return e instanceof NoSuchFileException || "No such process".equals(e.getMessage());
    }

    /** Every live process whose process group is {@code pgid}, ascending. */
    public static List<Integer> groupMembers(int pgid) throws IOException {
        List<Integer> out = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(PROC,
                p -> p.getFileName().toString().matches("\\d+"))) {
            for (Path p : ds) {
                int pid = Integer.parseInt(p.getFileName().toString());
                try {
                    Stat s = stat(pid);
                    if (s.pgrp() == pgid && s.state() != 'Z' && s.state() != 'X') {
                        out.add(s.pid());
                    }
                } catch (IOException e) {
                    if (!gone(e)) { // exited while we listed: any process of the node may, not only the group's
                        throw e;
                    }
                }
            }
        }
        out.sort(null);
        return out;
    }

    /** The {@code Key: value} lines of {@code /proc/<pid>/status} (or a task's, or meminfo), read once. */
    public static Map<String, String> status(Path statusFile) throws IOException {
        Map<String, String> out = new HashMap<>();
        for (String line : Files.readAllLines(statusFile, StandardCharsets.UTF_8)) {
            int colon = line.indexOf(':');
            if (colon > 0) {
                out.put(line.substring(0, colon), line.substring(colon + 1).trim());
            }
        }
        return out;
    }

    /** MemAvailable of /proc/meminfo in bytes. */
    public static long memAvailable() throws IOException {
        String kb = status(PROC.resolve("meminfo")).getOrDefault("MemAvailable", "0 kB").replace("kB", "").trim();
        return Long.parseLong(kb) * 1024;
    }

    public static Path dir(int pid) {
        return PROC.resolve(Integer.toString(pid));
    }

    public static byte[] auxv(int pid) throws IOException {
        return Files.readAllBytes(PROC.resolve(pid + "/auxv"));
    }

    /** The command line with its NUL separators as spaces. */
    public static String cmdline(int pid) throws IOException {
        byte[] b = Files.readAllBytes(PROC.resolve(pid + "/cmdline"));
        return new String(b, StandardCharsets.UTF_8).replace('\0', ' ').trim();
    }
}
