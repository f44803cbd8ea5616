package io.ferry.cli;

import io.ferry.model.ImageRef;
import io.ferry.model.Sizes;
import io.ferry.staging.LocalCache;
import io.ferry.staging.OpenedStore;
import io.ferry.staging.PullResult;
import io.ferry.staging.PushResult;
import io.ferry.staging.Staging;
import io.ferry.staging.VerifyReport;
import io.ferry.staging.internal.FileTrees;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;

/**
 * {@code ferry demo --storage-only}: the storage path alone, with nothing to install.
 * Four ranks dump realistic images into a node-local cache for several generations; each
 * generation is staged to a {@code file:} store and committed; retention trims the cache;
 * the newest snapshot is restored from the store and compared byte for byte; the store is
 * scrubbed. (Live ranks, the coordinator and automatic recovery arrive with the agent.)
 */
final class StorageDemo {
    private final Path dir;
    private final int ranks;
    private final int generations;
    private final String imageSize;

    StorageDemo(Path dir, int ranks, int generations, String imageSize) {
        this.dir = dir;
        this.ranks = ranks;
        this.generations = generations;
        this.imageSize = imageSize;
    }

    int run() throws Exception {
        if (ranks < 1 || generations < 1) {
            throw new IllegalArgumentException("--ranks and --generations must be >= 1");
        }
        long size = Sizes.parse(imageSize);
        Path work = dir.toAbsolutePath().normalize();
        DemoCommand.prepare(work);
        LocalCache cache = Staging.localCache(work.resolve("cache"));
        String store = work.resolve("store").toString();
        String job = "demo";
        System.out.printf("Ferry demo: %d ranks x %s images, %d generations, store file:%s%n", ranks,
                Sizes.format(size), generations, store);
        try (OpenedStore o = StoreOptions.open(store, Map.of())) {
            for (int g = 0; g < generations; g++) {
                long written = 0;
                long raw = 0;
                long t0 = System.nanoTime();
                for (int r = 0; r < ranks; r++) {
                    ImageRef ref = new ImageRef(job, g, r);
                    SyntheticImage.write(cache.imageDir(ref), size, 1000 + r, g);
                    PushResult p = o.pipeline().push(cache.imageDir(ref), ref, TerminalProgress.forStderr());
                    cache.markStaged(ref, p);
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

    private static boolean established(OpenedStore o, String job, long gen) {
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
