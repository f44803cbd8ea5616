package io.ferry.staging;

import io.ferry.model.ImageRef;
import io.ferry.model.Names;
import io.ferry.model.RankSet;
import io.ferry.staging.internal.FileTrees;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;

/**
 * How {@link LocalCache#reclaim} removes from a node-local cache what a job no longer needs, by
 * the job's {@link LocalCache.Standing}: its whole directory, the generations all staged, or this
 * node's own staged images, each renamed aside before it is deleted. Stateless; not thread-safe
 * with the job's own use of the cache (the caller runs it when no agent serves the job here).
 */
final class CacheReclaim {
    private CacheReclaim() {
    }

    static LocalCache.Reclaimed reclaim(LocalCache cache, String job, LocalCache.Standing standing)
            throws IOException {
        Path dir = cache.root().resolve(Names.requireJob(job));
        List<String> removed = new ArrayList<>();
        List<Long> kept = new ArrayList<>();
        long freed = 0;
        if (!Files.isDirectory(dir)) {
            return new LocalCache.Reclaimed(removed, 0, kept);
        }
        if (standing == LocalCache.Standing.FINISHED) {
            freed = LocalCache.bytesUnder(dir);
            Path trash = cache.root().resolve(".trash-" + job + "-"
                    + Long.toHexString(ThreadLocalRandom.current().nextLong()));
            Files.move(dir, trash, StandardCopyOption.ATOMIC_MOVE);
            FileTrees.delete(trash);
            removed.add("the job's directory");
            return new LocalCache.Reclaimed(removed, freed, kept);
        }
        Path restart = dir.resolve(".restart");
        if (Files.exists(restart)) {
            freed += LocalCache.bytesUnder(restart);
            Path trash = dir.resolve(".trash-restart-"
                    + Long.toHexString(ThreadLocalRandom.current().nextLong()));
            Files.move(restart, trash, StandardCopyOption.ATOMIC_MOVE);
            FileTrees.delete(trash);
            removed.add("the restore area");
        }
        for (long g : cache.generations(job)) {
            Path gen = cache.generationDir(job, g);
            if (standing == LocalCache.Standing.ENDED) {
                if (cache.allStaged(job, g)) {
                    freed += LocalCache.bytesUnder(gen);
                    cache.drop(job, g);
                    removed.add("generation " + g);
                } else {
                    kept.add(g);
                }
                continue;
            }
            List<Integer> own = new ArrayList<>();
            for (int r : ranks(gen)) {
                ImageRef ref = new ImageRef(job, g, r);
                if (cache.isPartnerCopy(ref)) {
                    continue;
                }
                if (!cache.isStaged(ref)) {
                    if (!kept.contains(g)) {
                        kept.add(g);
                    }
                    continue;
                }
                Path image = cache.imageDir(ref);
                freed += LocalCache.bytesUnder(image);
                Path trash = gen.resolve(".trash-" + r + "-"
                        + Long.toHexString(ThreadLocalRandom.current().nextLong()));
                Files.move(image, trash, StandardCopyOption.ATOMIC_MOVE);
                FileTrees.delete(trash);
                Files.deleteIfExists(gen.resolve(".staged-" + r)); // last: an image here never lacks its marker
                own.add(r);
            }
            if (!own.isEmpty()) {
                removed.add("generation " + g + " ranks "
                        + RankSet.of(own.stream().mapToInt(Integer::intValue)));
            }
            if (ranks(gen).isEmpty() && !receiving(gen)) {
                cache.drop(job, g);
            }
        }
        // A job that runs elsewhere keeps its (maybe empty) directory: a partner copy may be arriving into it.
        if (standing == LocalCache.Standing.ENDED && cache.generations(job).isEmpty()) {
            FileTrees.delete(dir); // no image of it left: its directory goes too
        }
        return new LocalCache.Reclaimed(removed, freed, kept);
    }

    private static List<Integer> ranks(Path gen) throws IOException {
        try (Stream<Path> s = Files.list(gen)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.matches("\\d{1,9}")).map(Integer::parseInt)
                    .sorted().toList();
        }
    }

    /** Whether a partner copy is being received into {@code gen} ({@link LocalCache#incomingDir}). */
    private static boolean receiving(Path gen) throws IOException {
        try (Stream<Path> s = Files.list(gen)) {
            return s.anyMatch(p -> p.getFileName().toString().startsWith(".incoming-"));
        }
    }
}
