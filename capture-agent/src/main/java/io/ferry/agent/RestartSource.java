package io.ferry.agent;

import io.ferry.compression.Digests;
import io.ferry.model.Entry;
import io.ferry.model.ImageRef;
import io.ferry.model.Manifest;
import io.ferry.staging.LocalCache;
import io.ferry.staging.Progress;
import io.ferry.staging.StagingPipeline;
import io.ferry.staging.internal.FileTrees;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.util.HashSet;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Materialises one rank's image for a restart from the nearest tier that verifies: the
 * node-local cache when every file there matches the committed manifest (size and
 * SHA-256, nothing missing, nothing extra), else the remote store (every chunk verified).
 * Nothing restarts from bytes that were not verified.
 */
public final class RestartSource {
    private RestartSource() {}

    /** Fills {@code target} (absent) with the image of {@code ref}; returns the tier used: "local" or "remote". */
    public static String materialise(StagingPipeline pipeline, LocalCache cache, ImageRef ref, Path target)
            throws IOException {
        Manifest m = pipeline.repository().readManifest(ref).manifest();
        Path local = cache.imageDir(ref);
        FileTrees.delete(target);
        if (Files.isDirectory(local) && matches(local, m)) {
            copyTree(local, target);
            return "local";
        }
        pipeline.pull(ref, target, Progress.NONE);
        return "remote";
    }

    /** The tier a restart of {@code ref} would use, without copying: "local (verified)" or "remote". */
    public static String plan(StagingPipeline pipeline, LocalCache cache, ImageRef ref) throws IOException {
        Manifest m = pipeline.repository().readManifest(ref).manifest();
        Path local = cache.imageDir(ref);
        if (Files.isDirectory(local) && matches(local, m)) {
            return "local (cache copy verified against the manifest)";
        }
        return "remote (" + (Files.isDirectory(local) ? "cache copy does not verify" : "not in this node's cache") + ")";
    }

    /** The tier alone ({@code local} or {@code remote}) of {@link #plan}. */
    public static String tier(StagingPipeline pipeline, LocalCache cache, ImageRef ref) throws IOException {
        return plan(pipeline, cache, ref).startsWith("local") ? "local" : "remote";
    }

    /** Whether a cached image holds exactly the manifest's files with their digests. */
    static boolean matches(Path dir, Manifest m) throws IOException {
        Set<String> expected = new HashSet<>();
        for (Entry e : m.entries()) {
            expected.add(e.path());
            Path p = dir.resolve(e.path());
            if (e instanceof Entry.RegularFile f) {
                if (!Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS) || Files.size(p) != f.size()
                        || !sha256(p).equals(f.sha256())) {
                    return false;
                }
            } else if (e instanceof Entry.Symlink s) {
                if (!Files.isSymbolicLink(p) || !Files.readSymbolicLink(p).toString().equals(s.target())) {
                    return false;
                }
            } else if (!Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                return false;
            }
        }
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(p -> !p.equals(dir)).map(p -> dir.relativize(p).toString()).allMatch(expected::contains);
        }
    }

    private static String sha256(Path p) throws IOException {
        MessageDigest md = Digests.newSha256();
        byte[] buf = new byte[1 << 20];
        try (InputStream in = Files.newInputStream(p)) {
            int n;
            while ((n = in.read(buf)) > 0) {
                md.update(buf, 0, n);
            }
        }
        return Digests.hex(md.digest());
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> s = Files.walk(from)) {
            for (Path p : s.toList()) {
                Path dst = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                    Files.createDirectories(dst);
                } else {
                    Files.copy(p, dst, StandardCopyOption.COPY_ATTRIBUTES, LinkOption.NOFOLLOW_LINKS);
                }
            }
        }
    }
}
