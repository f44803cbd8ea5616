package io.ferry.cli;

import io.ferry.model.ImageRef;
import io.ferry.model.Sizes;
import io.ferry.staging.LocalCache;
import io.ferry.staging.PullResult;
import io.ferry.staging.PushResult;
import io.ferry.staging.Staging;
import io.ferry.staging.VerifyReport;
import io.ferry.staging.internal.FileTrees;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code ferry demo}: the storage path on the embedded default, with nothing to install.
 * Four ranks dump realistic images into a node-local cache for several generations; each
 * generation is staged to a {@code file:} store and committed; retention trims the cache;
 * the newest snapshot is restored from the store and compared byte for byte; the store is
 * scrubbed. (Live ranks, the coordinator and automatic recovery arrive with the agent.)
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Run the storage pipeline end to end on this machine: cache, stage, commit, restore, verify.")
final class DemoCommand implements Callable<Integer> {
    @Option(names = "--dir", paramLabel = "DIR", description = "Working directory (default: ./ferry-demo, recreated).")
    Path dir = Path.of("ferry-demo");

    @Option(names = "--ranks", paramLabel = "N", defaultValue = "4")
    int ranks;

    @Option(names = "--generations", paramLabel = "N", defaultValue = "3")
    int generations;

    @Option(names = "--image-size", paramLabel = "SIZE", defaultValue = "48MiB", description = "Image size per rank.")
    String imageSize;

    @Override
    public Integer call() throws Exception {
        if (ranks < 1 || generations < 1) {
            throw new IllegalArgumentException("--ranks and --generations must be >= 1");
        }
        long size = Sizes.parse(imageSize);
        Path work = dir.toAbsolutePath().normalize();
        prepare(work);
        LocalCache cache = Staging.localCache(work.resolve("cache"));
        String store = work.resolve("store").toString();
        String job = "demo";
        System.out.printf("Ferry demo: %d ranks x %s images, %d generations, store file:%s%n", ranks,
                Sizes.format(size), generations, store);
        try (StoreOptions.Opened o = StoreOptions.open(store, Map.of())) {
            for (int g = 0; g < generations; g++) {
                long written = 0;
                long raw = 0;
                long t0 = System.nanoTime();
                for (int r = 0; r < ranks; r++) {
                    ImageRef ref = new ImageRef(job, g, r);
                    SyntheticImage.write(cache.imageDir(ref), size, 1000 + r, g);
                    PushResult p = o.pipeline().push(cache.imageDir(ref), ref, TerminalProgress.forStderr());
                    cache.markStaged(ref);
                    written += p.storedBytes();
                    raw += p.rawBytes();
                }
                o.pipeline().repository().commitSnapshot(job, g, ranks);
                var deleted = cache.applyRetention(job, o.pipeline().config().keepGenerations(),
                        gen -> established(o, job, gen));
                System.out.printf(Locale.ROOT, "generation %d: %s raw staged, %s new in store (%.1f%%), established"
                                + " in %.2f s; cache keeps %s%s%n", g, Sizes.format(raw), Sizes.format(written),
                        100.0 * written / raw, (System.nanoTime() - t0) / 1e9, cache.generations(job),
                        deleted.isEmpty() ? "" : ", dropped " + deleted);
            }
            long newest = generations - 1;
            boolean same = true;
            for (int r = 0; r < ranks; r++) {
                ImageRef ref = new ImageRef(job, newest, r);
                Path restored = work.resolve("restored").resolve(Integer.toString(r));
                PullResult p = o.pipeline().pull(ref, restored, TerminalProgress.forStderr());
                same &= identical(cache.imageDir(ref), restored);
                System.out.printf(Locale.ROOT, "restored rank %d of generation %d: %s verified in %.2f s%n", r, newest,
                        Sizes.format(p.rawBytes()), p.elapsed().toNanos() / 1e9);
            }
            VerifyReport v = o.pipeline().verify(TerminalProgress.forStderr());
            System.out.printf("store scrub: %d chunks, %d manifests, %d snapshots, %d problems%n", v.chunks(),
                    v.manifests(), v.snapshots(), v.problems().size());
            System.out.println(same && v.ok() ? "demo OK: restored images are byte-identical to the dumped ones"
                    : "demo FAILED: restored images differ or the store is damaged");
            return same && v.ok() ? 0 : 1;
        }
    }

    /** Recreates the working directory, refusing to delete one that an earlier demo did not make. */
    private static void prepare(Path work) throws IOException {
        Path marker = work.resolve(".ferry-demo");
        if (Files.isDirectory(work) && !Files.exists(marker)) {
            try (var s = Files.list(work)) {
                if (s.findAny().isPresent()) {
                    throw new IllegalArgumentException("refusing to use " + work
                            + ": it is not empty and was not made by ferry demo; pass --dir with a new directory");
                }
            }
        }
        FileTrees.delete(work);
        Files.createDirectories(work);
        Files.createFile(marker);
    }

    private static boolean established(StoreOptions.Opened o, String job, long gen) {
        try {
            return o.pipeline().repository().isEstablished(job, gen);
        } catch (IOException e) {
            return false;
        }
    }

    private static boolean identical(Path a, Path b) throws IOException {
        for (String f : new String[]{"text.bin", "heap.bin", "fields.bin", "random.bin"}) {
            if (Files.mismatch(a.resolve(f), b.resolve(f)) != -1) {
                return false;
            }
        }
        return true;
    }
}
