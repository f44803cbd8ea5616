package io.ferry.staging.internal;

import java.io.File;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Lists an image directory in a stable order without following links. Sockets, FIFOs and
 * devices have no place in an image and are refused with the path named.
 */
public final class ImageScanner {
    /** One entry found: its image-relative path, absolute path, kind, permission bits and size. */
    public record Found(String path, Path file, Kind kind, int mode, long size) {}

    public enum Kind { FILE, DIR, SYMLINK }

    private ImageScanner() {}

    public static List<Found> scan(Path dir) throws IOException {
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            throw new IllegalArgumentException("image directory " + dir + " does not exist or is not a directory");
        }
        List<Found> out = new ArrayList<>();
        Files.walkFileTree(dir, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes attrs) throws IOException {
                if (!d.equals(dir)) {
                    out.add(new Found(rel(dir, d), d, Kind.DIR, mode(d), 0));
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path f, BasicFileAttributes attrs) throws IOException {
                if (attrs.isSymbolicLink()) {
                    out.add(new Found(rel(dir, f), f, Kind.SYMLINK, 0, 0));
                } else if (attrs.isRegularFile()) {
                    out.add(new Found(rel(dir, f), f, Kind.FILE, mode(f), attrs.size()));
                } else {
                    throw new IllegalArgumentException("cannot put " + f + " in an image: not a regular file, "
                            + "directory or symlink (socket, FIFO or device)");
                }
                return FileVisitResult.CONTINUE;
            }
        });
        out.sort(Comparator.comparing(Found::path));
        return out;
    }

    private static String rel(Path root, Path p) {
        return root.relativize(p).toString().replace(File.separatorChar, '/');
    }

    private static int mode(Path p) throws IOException {
        return ((Integer) Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS)) & 0777;
    }
}
