package io.ferry.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;

/**
 * A seeded, realistic checkpoint image: what a rank's memory dump looks like to a storage
 * pipeline. Four files, in fixed proportions of the requested size:
 * <ul>
 *   <li>{@code text.bin} (15%): machine code, copied from the system's shared libraries;</li>
 *   <li>{@code heap.bin} (40%): heap-like 4 KiB pages, 40% of them never touched (zero), the rest
 *       small integers, pointer-like words and some noise;</li>
 *   <li>{@code fields.bin} (30%): smooth double-precision arrays (a simulation's fields) with
 *       noisy low mantissa bits, which compress poorly, as real ones do;</li>
 *   <li>{@code random.bin} (15%): incompressible bytes (encrypted or compressed state).</li>
 * </ul>
 * The same seed and size give the same bytes. {@code step} advances the simulation: the
 * fields file changes completely between steps; the rest stays, as between the generations
 * of a long run.
 */
public final class SyntheticImage {
    private static final int BLOCK = 1 << 20;

    private SyntheticImage() {}

    public static long write(Path dir, long bytes, long seed, int step) throws IOException {
        Files.createDirectories(dir);
        long text = bytes * 15 / 100;
        long heap = (bytes * 40 / 100) & ~4095L;
        long fields = (bytes * 30 / 100) & ~7L;
        long random = bytes - text - heap - fields;
        writeText(dir.resolve("text.bin"), text);
        writeHeap(dir.resolve("heap.bin"), heap, new SplittableRandom(seed));
        writeFields(dir.resolve("fields.bin"), fields, new SplittableRandom(seed * 31 + step), step);
        writeRandom(dir.resolve("random.bin"), random, new SplittableRandom(seed * 17 + 5));
        return bytes;
    }

    private static void writeText(Path file, long n) throws IOException {
        List<Path> libs = new ArrayList<>();
        for (String d : List.of("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib", "/lib")) {
            Path p = Path.of(d);
            if (Files.isDirectory(p)) {
                try (Stream<Path> s = Files.list(p)) {
                    s.filter(f -> f.getFileName().toString().contains(".so") && Files.isRegularFile(f))
                            .sorted().forEach(libs::add);
                }
            }
        }
        try (OutputStream out = Files.newOutputStream(file)) {
            long left = n;
            byte[] buf = new byte[BLOCK];
            SplittableRandom fallback = new SplittableRandom(7);
            for (int i = 0; left > 0; i++) {
                if (libs.isEmpty()) { // no libraries: bytes with code-like statistics
                    for (int j = 0; j < buf.length; j++) {
                        buf[j] = (byte) (fallback.nextInt(16) == 0 ? fallback.nextInt(256) : fallback.nextInt(32));
                    }
                    int len = (int) Math.min(left, buf.length);
                    out.write(buf, 0, len);
                    left -= len;
                    continue;
                }
                Path lib = libs.get(i % libs.size());
                try (var in = Files.newInputStream(lib)) {
                    int r;
                    while (left > 0 && (r = in.read(buf, 0, (int) Math.min(buf.length, left))) > 0) {
                        out.write(buf, 0, r);
                        left -= r;
                    }
                } catch (IOException unreadable) {
                    if (i > libs.size() * 2) {
                        throw unreadable;
                    }
                }
            }
        }
    }

    private static void writeHeap(Path file, long n, SplittableRandom rnd) throws IOException {
        ByteBuffer page = ByteBuffer.allocate(4096).order(ByteOrder.LITTLE_ENDIAN);
        try (OutputStream out = Files.newOutputStream(file)) {
            byte[] block = new byte[BLOCK];
            int pos = 0;
            for (long p = 0; p < n / 4096; p++) {
                page.clear();
                if (rnd.nextInt(100) < 40) {
                    page.put(new byte[4096]);
                } else {
                    long base = 0x00007f0000000000L + ((long) rnd.nextInt(1 << 20) << 12);
                    while (page.hasRemaining()) {
                        int kind = rnd.nextInt(10);
                        page.putLong(kind < 5 ? rnd.nextInt(1000) : kind < 8 ? base + (rnd.nextInt(4096) & ~7)
                                : rnd.nextLong());
                    }
                }
                System.arraycopy(page.array(), 0, block, pos, 4096);
                pos += 4096;
                if (pos == block.length) {
                    out.write(block);
                    pos = 0;
                }
            }
            out.write(block, 0, pos);
        }
    }

    private static void writeFields(Path file, long n, SplittableRandom rnd, int step) throws IOException {
        ByteBuffer block = ByteBuffer.allocate(BLOCK).order(ByteOrder.LITTLE_ENDIAN);
        double t = step * 0.1;
        try (OutputStream out = Files.newOutputStream(file)) {
            for (long i = 0; i < n / 8; i++) {
                double x = i * 1e-4;
                block.putDouble(Math.sin(x + t) * Math.cos(0.37 * x) + 1e-9 * rnd.nextDouble());
                if (!block.hasRemaining()) {
                    out.write(block.array());
                    block.clear();
                }
            }
            out.write(block.array(), 0, block.position());
        }
    }

    private static void writeRandom(Path file, long n, SplittableRandom rnd) throws IOException {
        byte[] block = new byte[BLOCK];
        ByteBuffer b = ByteBuffer.wrap(block);
        try (OutputStream out = Files.newOutputStream(file)) {
            for (long left = n; left > 0; left -= block.length) {
                b.clear();
                while (b.hasRemaining()) {
                    b.putLong(rnd.nextLong());
                }
                out.write(block, 0, (int) Math.min(left, block.length));
            }
        }
    }
}
