package io.ferry.benchmarks;

import io.ferry.cli.SyntheticImage;
import io.ferry.model.ImageRef;
import io.ferry.model.Sizes;
import io.ferry.staging.Progress;
import io.ferry.staging.PullResult;
import io.ferry.staging.PushResult;
import io.ferry.staging.Staging;
import io.ferry.staging.StagingConfig;
import io.ferry.staging.StagingPipeline;
import io.ferry.staging.internal.FileTrees;
import io.ferry.stores.Store;
import io.ferry.stores.Stores;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * What the next generation costs through the real push (storage engine v2, issue 14), for
 * each layout, on a POSIX store with durable writes: generation 1 is a seeded realistic image
 * ({@link SyntheticImage}); generation 2 rewrites 5% of it in scattered 256 KiB runs;
 * generation 3 is generation 1 with 100 bytes inserted at offset 4096 of every file. Each
 * generation is pushed by the same pipeline (as one node's agent pushes a rank's generations)
 * and reported as the bytes it wrote and the objects it added to the store, against
 * generation 1's; then generation 2 is pulled back and compared. Same images, same disk, one run.
 *
 * <p>Usage: {@code IncrementalBenchmark [SIZE] [WORK_DIR]} (default 1GiB).
 */
public final class IncrementalBenchmark {
    private IncrementalBenchmark() {}

    private record Gen(String name, Path dir) {}

    public static void main(String[] args) throws Exception {
        long size = args.length > 0 ? Sizes.parse(args[0]) : 1L << 30;
        Path work = Path.of(args.length > 1 ? args[1] : "bench-incremental").toAbsolutePath();
        FileTrees.delete(work);
        Path gen1 = work.resolve("gen1");
        SyntheticImage.write(gen1, size, 42, 0);
        List<String> names = new ArrayList<>();
        List<byte[]> files = new ArrayList<>();
        try (var s = Files.list(gen1)) {
            for (Path f : s.sorted().toList()) {
                names.add(f.getFileName().toString());
                files.add(Files.readAllBytes(f));
            }
        }
        Path gen2 = write(work.resolve("gen2"), names,
                ChunkingBenchmark.scatter(files, 0.05, 256 << 10, new SplittableRandom(7)));
        Path gen3 = write(work.resolve("gen3"), names,
                ChunkingBenchmark.shift(files, 4096, 100, new SplittableRandom(8)));
        files = null;
        List<Gen> gens = List.of(new Gen("generation 1", gen1), new Gen("+5% scattered", gen2),
                new Gen("+100 B shifted", gen3));

        System.out.printf(Locale.ROOT, "image %s in %d files, %d cores; POSIX store on %s%n", Sizes.format(size),
                names.size(), Runtime.getRuntime().availableProcessors(), work);
        System.out.println("| layout | generation | push s | raw MB/s | written | of gen 1"
                + " | objects added | objects per GiB raw |");
        System.out.println("|---|---|---:|---:|---:|---:|---:|---:|");
        for (String layout : List.of("chunks", "packs")) {
            Path storeDir = work.resolve("store-" + layout);
            try (Store store = Stores.open(storeDir.toUri(), Map.of());
                 StagingPipeline p = Staging.pipeline(store, StagingConfig.from(Map.of("staging.layout", layout)),
                         Clock.systemUTC())) {
                long first = 0;
                long objects = 0;
                for (int g = 0; g < gens.size(); g++) {
                    PushResult r = p.push(gens.get(g).dir(), new ImageRef("bench", g + 1, 0), Progress.NONE);
                    long now = store.list("").size();
                    if (g == 0) {
                        first = r.storedBytes();
                    }
                    System.out.printf(Locale.ROOT, "| %s | %s | %.2f | %.0f | %s | %s | %d | %.0f |%n", layout,
                            gens.get(g).name(), r.elapsed().toNanos() / 1e9, r.rawMBps(), Sizes.format(r.storedBytes()),
                            g == 0 ? "" : String.format(Locale.ROOT, "+%.1f%%", 100.0 * r.storedBytes() / first),
                            now - objects, (now - objects) / (size / (double) (1L << 30)));
                    System.out.printf(Locale.ROOT,
                            "RESULT layout=%s gen=%d stored=%d share=%.4f objects=%d seconds=%.3f%n",
                            layout, g + 1, r.storedBytes(), (double) r.storedBytes() / first, now - objects,
                            r.elapsed().toNanos() / 1e9);
                    objects = now;
                }
                Path out = work.resolve("out-" + layout);
                PullResult pulled = p.pull(new ImageRef("bench", 2, 0), out, Progress.NONE);
                for (String n : names) {
                    if (Files.mismatch(gen2.resolve(n), out.resolve(n)) != -1) {
                        throw new IllegalStateException(layout + ": pulled " + n + " differs");
                    }
                }
                System.out.printf(Locale.ROOT, "| %s | pull of +5%% scattered | %.2f | %.0f | | | | |%n", layout,
                        pulled.elapsed().toNanos() / 1e9, size / 1e6 / (pulled.elapsed().toNanos() / 1e9));
                FileTrees.delete(out);
            }
            FileTrees.delete(storeDir);
        }
        System.out.println("goals (issue 14): the +5% scattered generation writes at most +15% of generation 1's bytes,"
                + " the +100 B shifted one at most +10%");
        FileTrees.delete(work);
    }

    private static Path write(Path dir, List<String> names, List<byte[]> files) throws Exception {
        Files.createDirectories(dir);
        for (int i = 0; i < names.size(); i++) {
            Files.write(dir.resolve(names.get(i)), files.get(i));
        }
        return dir;
    }
}
