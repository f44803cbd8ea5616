package io.ferry.benchmarks;

import io.ferry.stores.FileIo;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

/**
 * What reading a directory's files from the page cache into heap arrays costs one thread, three ways:
 * the JDK's temporary direct buffer with 4 MiB reads (what a push's reader did before {@link FileIo}),
 * 1 MiB reads (what the POSIX store's reads did), and {@link FileIo}'s own 256 KiB direct buffer
 * (what both do now). Each way runs in a fresh thread, so the JDK's per-thread buffer starts empty, and
 * once more after that thread read 4 MiB at a time (a daemon's threads keep their history). Rounds are
 * alternated; the medians of the thread's CPU and wall time are printed, with the CPU's ratio to {@link FileIo}.
 * Usage: {@code FileReadBenchmark DIR [ROUNDS]} (the seeded image of {@code run-staging.sh} is a good DIR).
 */
public final class FileReadBenchmark {
    private static final int SEGMENT = 4 << 20;

    private FileReadBenchmark() {}

    private interface Way {
        void read(FileChannel ch, byte[] segment) throws IOException;
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        List<Path> files = new ArrayList<>();
        try (Stream<Path> s = Files.walk(dir)) {
            s.filter(Files::isRegularFile).sorted().forEach(files::add);
        }
        long bytes = 0;
        for (Path f : files) {
            bytes += Files.size(f);
        }
        String[] names = {"JDK buffer, 4 MiB reads", "JDK buffer, 1 MiB reads",
                "JDK buffer, 256 KiB reads after a 4 MiB read", "FileIo (own 256 KiB direct buffer)",
                "FileIo, after a 4 MiB read on the thread"};
        Way[] ways = {
                (ch, seg) -> jdk(ch, seg, SEGMENT),
                (ch, seg) -> jdk(ch, seg, 1 << 20),
                (ch, seg) -> jdk(ch, seg, 256 << 10),
                FileReadBenchmark::fileIo,
                FileReadBenchmark::fileIo};
        boolean[] dirty = {false, false, true, false, true};
        double[][] cpu = new double[ways.length][rounds];
        double[][] wall = new double[ways.length][rounds];
        for (int r = -1; r < rounds; r++) { // round -1 warms the JIT and the page cache
            for (int w = 0; w < ways.length; w++) {
                double[] ms = timed(files, ways[w], dirty[w]);
                if (r >= 0) {
                    cpu[w][r] = ms[0];
                    wall[w][r] = ms[1];
                }
            }
        }
        System.out.printf("%d files, %.1f MiB, %d rounds, %d cores%n", files.size(), bytes / 1048576.0, rounds,
                Runtime.getRuntime().availableProcessors());
        System.out.println();
        System.out.println("| read into 4 MiB heap arrays | thread CPU ms (median) | wall ms (median) | MB/s of CPU"
                + " | CPU vs FileIo |");
        System.out.println("|---|---:|---:|---:|---:|");
        double base = median(cpu[3]);
        for (int w = 0; w < ways.length; w++) {
            double m = median(cpu[w]);
            System.out.printf("| %s | %.0f | %.0f | %.0f | %.2fx |%n", names[w], m, median(wall[w]),
                    bytes / 1e6 / (m / 1e3), m / base);
        }
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    /**
     * The CPU and wall milliseconds a fresh thread takes to read every file with {@code way};
     * {@code dirty}: after one 4 MiB heap read.
     */
    private static double[] timed(List<Path> files, Way way, boolean dirty) throws Exception {
        double[] out = new double[2];
        Exception[] failed = new Exception[1];
        Thread t = new Thread(() -> {
            try {
                byte[] segment = new byte[SEGMENT];
                if (dirty) {
                    try (FileChannel ch = FileChannel.open(files.get(0))) {
                        ch.read(ByteBuffer.wrap(segment));
                    }
                }
                ThreadMXBean mx = ManagementFactory.getThreadMXBean();
                long c0 = mx.getCurrentThreadCpuTime();
                long t0 = System.nanoTime();
                for (Path f : files) {
                    try (FileChannel ch = FileChannel.open(f)) {
                        way.read(ch, segment);
                    }
                }
                out[0] = (mx.getCurrentThreadCpuTime() - c0) / 1e6;
                out[1] = (System.nanoTime() - t0) / 1e6;
            } catch (Exception e) {
                failed[0] = e;
            }
        });
        t.start();
        t.join();
        if (failed[0] != null) {
            throw failed[0];
        }
        return out;
    }

    /**
     * Reads the whole file, a segment at a time, through the JDK's temporary buffer in reads of {@code piece} bytes.
     */
    private static void jdk(FileChannel ch, byte[] segment, int piece) throws IOException {
        while (true) {
            int got = 0;
            for (int off = 0; off < segment.length; off += piece) {
                int n = ch.read(ByteBuffer.wrap(segment, off, Math.min(piece, segment.length - off)));
                if (n <= 0) {
                    return;
                }
                got += n;
                if (n < piece) {
                    break;
                }
            }
            if (got < segment.length) {
                return;
            }
        }
    }

    private static void fileIo(FileChannel ch, byte[] segment) throws IOException {
        while (FileIo.read(ch, segment, 0, segment.length) == segment.length) {
            // the next segment
        }
    }
}
