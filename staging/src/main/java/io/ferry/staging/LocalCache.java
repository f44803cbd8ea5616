package io.ferry.staging;

import io.ferry.model.ImageRef;
import io.ferry.model.Names;
import io.ferry.model.OwnerOnly;
import io.ferry.staging.internal.FileTrees;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;

/**
 * A node-local cache directory: {@code <root>/<job>/<generation>/<rank>/} holds a rank's image
 * as it dumped it, and {@code <root>/<job>/<generation>/.staged-<rank>} records that the
 * image reached the remote store (and holds the check of the cached copy a restart uses). A partner copy of another
 * node's rank sits in the same place, {@code .partner-<rank>} beside it saying so (it is staged by its own node, so it
 * never holds up retention here). Retention keeps the newest N generations of a job and
 * never deletes the newest generation established remotely, nor any generation holding an
 * image not yet staged. Once a job is over or has left the node, {@link #reclaim} removes what
 * it no longer needs. Thread-safe per job when one agent owns the directory.
 */
public final class LocalCache {
    private final Path root;

    LocalCache(Path root) {
        this.root = root.toAbsolutePath().normalize();
    }

    public Path root() {
        return root;
    }

    /** The directory a rank dumps its image into (created by the caller). */
    public Path imageDir(ImageRef ref) {
        return generationDir(ref.job(), ref.generation()).resolve(Integer.toString(ref.rank()));
    }

    Path generationDir(String job, long generation) {
        return root.resolve(Names.requireJob(job)).resolve(Long.toString(Names.requireGeneration(generation)));
    }

    /** Records, durably, that {@code ref} is on the remote store (no local check: a restart verifies by SHA-256). */
    public void markStaged(ImageRef ref) throws IOException {
        writeStaged(ref, ByteBuffer.allocate(0));
    }

    /**
     * Records, durably, that {@code ref} is on the remote store as {@code pushed} put it, with
     * the cache's own check of its copy: the manifest's SHA-256 and every chunk's CRC32C (the
     * {@code .staged-<rank>} file's bytes: {@link StagedMarker}). A restart from this cache checks
     * each chunk against its CRC32C when the committed manifest is that one (see {@link #stagedCheck}).
     */
    public void markStaged(ImageRef ref, PushResult pushed) throws IOException {
        writeStaged(ref, StagedMarker.encode(pushed.manifestSha256(), pushed.chunkCrc32c()));
    }

    /**
     * The cache's check of its copy of an image: the manifest it was pushed as, and each chunk's
     * CRC32C in manifest order.
     */
    public record StagedCheck(String manifestSha256, int[] chunkCrc32c) {}

    /**
     * The check {@link #markStaged(ImageRef, PushResult)} recorded for {@code ref}; empty when
     * the image is not marked staged, was marked without one, or the record is not whole (a
     * restart then verifies by SHA-256, as it does for partner copies).
     */
    public Optional<StagedCheck> stagedCheck(ImageRef ref) throws IOException {
        Path marker = generationDir(ref.job(), ref.generation()).resolve(".staged-" + ref.rank());
        byte[] bytes;
        try {
            if (Files.size(marker) > 1 << 20) { // not what markStaged writes: not whole
                return Optional.empty();
            }
            bytes = Files.readAllBytes(marker);
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
        return StagedMarker.decode(bytes);
    }

    private void writeStaged(ImageRef ref, ByteBuffer content) throws IOException {
        Path marker = generationDir(ref.job(), ref.generation()).resolve(".staged-" + ref.rank());
        OwnerOnly.createDirectories(marker.getParent());
        try (FileChannel ch = FileChannel.open(marker, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            while (content.hasRemaining()) {
                ch.write(content);
            }
            ch.force(true);
        }
        try (FileChannel dir = FileChannel.open(marker.getParent(), StandardOpenOption.READ)) {
            dir.force(true);
        }
    }

    /**
     * Moves a partner copy received into {@code incoming} (a directory under this cache, fsynced
     * by the caller) into place for {@code ref}, replacing an older copy, and records durably
     * that it is a partner copy.
     */
    public void installPartnerCopy(Path incoming, ImageRef ref) throws IOException {
        Path dst = imageDir(ref);
        Path gen = dst.getParent();
        Path marker = gen.resolve(".partner-" + ref.rank());
        try (FileChannel ch = FileChannel.open(marker, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            ch.force(true); // before the image: a rank directory here without a marker would look like our own
        }
        if (Files.exists(dst)) {
            Path old = gen.resolve(".trash-" + ref.rank() + "-"
                    + Long.toHexString(ThreadLocalRandom.current().nextLong()));
            Files.move(dst, old, StandardCopyOption.ATOMIC_MOVE);
            FileTrees.delete(old);
        }
        Files.move(incoming, dst, StandardCopyOption.ATOMIC_MOVE);
        try (FileChannel dir = FileChannel.open(gen, StandardOpenOption.READ)) {
            dir.force(true);
        }
    }

    /** A fresh directory, inside generation {@code ref}'s directory, to receive a partner copy into. */
    public Path incomingDir(ImageRef ref) throws IOException {
        Path gen = generationDir(ref.job(), ref.generation());
        OwnerOnly.createDirectories(gen);
        return Files.createTempDirectory(gen, ".incoming-" + ref.rank() + "-");
    }

    /** Whether the cached image of {@code ref} is a partner copy (another node captured it). */
    public boolean isPartnerCopy(ImageRef ref) {
        return Files.exists(generationDir(ref.job(), ref.generation()).resolve(".partner-" + ref.rank()));
    }

    public boolean isStaged(ImageRef ref) {
        return Files.exists(generationDir(ref.job(), ref.generation()).resolve(".staged-" + ref.rank()));
    }

    /** Generations of {@code job} present in the cache, ascending. */
    public List<Long> generations(String job) throws IOException {
        Path dir = root.resolve(Names.requireJob(job));
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.matches("\\d{1,18}"))
                    .map(Long::parseLong).sorted().toList();
        }
    }

    /**
     * How full the cache is for {@code job}: the file system's size and free space, and the
     * bytes and generations the job holds in it (a job never seen holds nothing).
     */
    public Usage usage(String job) throws IOException {
        Names.requireJob(job);
        OwnerOnly.createDirectories(root);
        FileStore fs = Files.getFileStore(root);
        List<Long> gens = generations(job);
        long bytes = 0;
        for (long g : gens) {
            try (Stream<Path> s = Files.walk(generationDir(job, g))) {
                bytes += s.filter(Files::isRegularFile).mapToLong(p -> {
                    try {
                        return Files.size(p);
                    } catch (IOException e) {
                        return 0; // deleted while walking (retention)
                    }
                }).sum();
            } catch (UncheckedIOException | NoSuchFileException e) {
                // the generation went away while counting: it no longer takes space
            }
        }
        return new Usage(fs.getTotalSpace(), fs.getUsableSpace(), bytes, gens.size());
    }

    /** See {@link #usage(String)}. */
    public record Usage(long capacityBytes, long freeBytes, long jobBytes, int generations) {}

    /** Whether a generation is established on the store: true, false, or null when the store cannot say now. */
    @FunctionalInterface
    public interface EstablishedCheck {
        Boolean established(long generation);
    }

    /**
     * Applies retention to {@code job} and returns the generations deleted: only generations older than
     * the newest established one go, and of all generations the newest {@code keep}, the newest
     * established one and any image not yet staged stay.
     *
     * <p>Nothing newer than the newest established generation is dropped: any of them may be established
     * next. A generation's commit marker is written after the last node staged its part, and this node
     * may be that last one: it applies retention a moment before the marker exists. Dropped then (as it
     * was while staging ran two or more generations behind the captures), the generation that became the
     * newest established a moment later had no copy in this node's cache, and a restart from it fetched
     * this node's ranks from a partner or the store. They go once a newer generation is established.
     *
     * <p>The store may not be able to say whether a generation is established: one it cannot answer for
     * might be the newest established one, and is kept like one (while the store is down, the newest
     * established generation's local copy is the restart's fastest source, and maybe its only). Where no
     * generation is known to be established, nothing is dropped.
     *
     * @param keep        generations to keep, newest first
     * @param established whether a generation is established on the remote store (null: cannot say)
     */
    public List<Long> applyRetention(String job, int keep, EstablishedCheck established) throws IOException {
        if (keep < 1) {
            throw new IllegalArgumentException("keep must be >= 1, got " + keep);
        }
        List<Long> gens = new ArrayList<>(generations(job));
        gens.sort(Comparator.reverseOrder());
        // The newest generation the store says is established; every newer one stays (those it cannot
        // answer for among them). None established: every generation may be the first, none goes.
        long floor = Long.MIN_VALUE;
        for (long g : gens) {
            if (Boolean.TRUE.equals(established.established(g))) {
                floor = g;
                break;
            }
        }
        List<Long> deleted = new ArrayList<>();
        for (int i = keep; i < gens.size(); i++) {
            long g = gens.get(i);
            if (g >= floor || !allStaged(job, g)) {
                continue;
            }
            drop(job, g);
            deleted.add(g);
        }
        return deleted;
    }

    /**
     * Removes a generation from the cache: renamed aside first, so a half-deleted generation
     * is never mistaken for an image, then deleted.
     */
    public void drop(String job, long generation) throws IOException {
        Path dir = generationDir(job, generation);
        if (!Files.exists(dir)) {
            return;
        }
        Path trash = dir.resolveSibling(".trash-" + generation + "-"
                + Long.toHexString(ThreadLocalRandom.current().nextLong()));
        Files.move(dir, trash, StandardCopyOption.ATOMIC_MOVE);
        FileTrees.delete(trash);
    }

    /**
     * Jobs with a directory in the cache, by name (entries that are no job's name, such as a
     * half-deleted job, left out).
     */
    public List<String> jobs() throws IOException {
        if (!Files.isDirectory(root)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(root)) {
            return s.filter(Files::isDirectory).map(p -> p.getFileName().toString()).filter(LocalCache::isJobName)
                    .sorted().toList();
        }
    }

    private static boolean isJobName(String name) {
        try {
            Names.requireJob(name);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /** When anything under {@code job}'s directory last changed (epoch milliseconds); 0 when it has none. */
    public long lastModifiedMillis(String job) throws IOException {
        Path dir = root.resolve(Names.requireJob(job));
        if (!Files.isDirectory(dir)) {
            return 0;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            return s.mapToLong(p -> {
                try {
                    return Files.getLastModifiedTime(p).toMillis();
                } catch (IOException e) {
                    return 0; // deleted while walking
                }
            }).max().orElse(0);
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    /** Where a job stands, as far as its images in this cache go; see {@link #reclaim}. */
    public enum Standing {
        /** It finished successfully: nothing of it here is needed any more. */
        FINISHED,
        /**
         * It failed (and may be run again, restarting from its snapshots on the store), or the event
         * log does not know it: what the store holds may go, what only this cache holds stays.
         */
        ENDED,
        /** It runs, but places no ranks on this node any more (they moved off it after it was lost). */
        MOVED_OFF
    }

    /**
     * What {@link #reclaim} did: what it removed and the bytes that freed, and the generations it
     * kept because they hold an image of this node that is not yet staged.
     */
    public record Reclaimed(List<String> removed, long freedBytes, List<Long> keptUnstaged) {
        public Reclaimed {
            removed = List.copyOf(removed);
            keptUnstaged = List.copyOf(keptUnstaged);
        }
    }

    /**
     * Removes from the cache what {@code job} no longer needs, by {@code standing}:
     * <ul>
     * <li>{@link Standing#FINISHED}: the job's whole directory, staged or not (the job will not
     *     restart);</li>
     * <li>{@link Standing#ENDED}: every generation whose images are all staged or partner copies
     *     (a partner copy is staged by the node that captured it), and the restore area; a
     *     generation holding an image of this node not yet staged stays;</li>
     * <li>{@link Standing#MOVED_OFF}: this node's own staged images and the restore area; partner
     *     copies (the restore source of ranks whose node was lost) and images not yet staged stay.</li>
     * </ul>
     * Everything is renamed aside before it is deleted, so a half-deleted image is never taken for
     * one. Not thread-safe with the job's own use of the cache: the caller runs it when no agent
     * serves the job here.
     */
    public Reclaimed reclaim(String job, Standing standing) throws IOException {
        return CacheReclaim.reclaim(this, job, standing);
    }

    /** The bytes of the files under {@code dir} (or of {@code dir}, a file), not following links. */
    static long bytesUnder(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile).mapToLong(p -> {
                try {
                    return Files.size(p);
                } catch (IOException e) {
                    return 0; // deleted while walking
                }
            }).sum();
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    /** The ranks of {@code generation} whose images here are neither staged nor a partner's copy, in order. */
    public List<Integer> unstagedRanks(String job, long generation) throws IOException {
        Path dir = generationDir(job, generation);
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.matches("\\d{1,9}"))
                    .filter(r -> !Files.exists(dir.resolve(".staged-" + r))
                            && !Files.exists(dir.resolve(".partner-" + r)))
                    .map(Integer::parseInt).sorted().toList();
        }
    }

    boolean allStaged(String job, long generation) throws IOException {
        Path dir = generationDir(job, generation);
        try (Stream<Path> s = Files.list(dir)) {
            List<String> ranks = s.map(p -> p.getFileName().toString()).filter(n -> n.matches("\\d{1,9}")).toList();
            for (String r : ranks) {
                if (!Files.exists(dir.resolve(".staged-" + r)) && !Files.exists(dir.resolve(".partner-" + r))) {
                    return false;
                }
            }
            return true;
        }
    }
}
