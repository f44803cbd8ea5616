package io.ferry.agent.capture;

import io.ferry.model.OwnerOnly;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * Makes an image directory appear only complete: filled under a hidden {@code .NAME.partial}
 * sibling, every file fsynced, renamed into place, the parent fsynced. On failure the
 * partial directory is removed, so no half image is ever counted. Stateless.
 */
final class ImageDirs {
    interface Filler {
        void fill(Path partial) throws IOException;
    }

    private ImageDirs() {
    }

    static void fill(Path dir, Filler filler) throws IOException {
        Path abs = dir.toAbsolutePath();
        Path partial = abs.resolveSibling("." + abs.getFileName() + ".partial");
        delete(partial);
        OwnerOnly.createDirectories(partial);
        try {
            filler.fill(partial);
            try (Stream<Path> files = Files.walk(partial)) {
                for (Path f : files.filter(Files::isRegularFile).toList()) {
                    try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE)) {
                        ch.force(true);
                    }
                }
            }
            Files.move(partial, abs, StandardCopyOption.ATOMIC_MOVE);
            try (FileChannel ch = FileChannel.open(abs.getParent(), StandardOpenOption.READ)) {
                ch.force(true);
            }
        } catch (IOException | RuntimeException e) {
            delete(partial);
            throw e;
        }
    }

    /** Bytes of the regular files under {@code dir}. */
    static long size(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            long n = 0;
            for (Path f : s.filter(Files::isRegularFile).toList()) {
                n += Files.size(f);
            }
            return n;
        }
    }

    /** Copies the tree {@code from} to {@code to} (absent), regular files and directories. */
    static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> s = Files.walk(from)) {
            for (Path p : s.toList()) {
                Path q = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(q);
                } else {
                    Files.copy(p, q, StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        }
    }

    static void delete(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (Stream<Path> s = Files.walk(p)) {
            for (Path q : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(q);
            }
        }
    }
}
