package io.ferry.staging.internal;

import io.ferry.stores.ConcurrentTreeVisitor;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;

/** Small file-tree helpers shared by pulls and the local cache. */
public final class FileTrees {
    private static final PosixFilePermission[] BITS = {
            PosixFilePermission.OTHERS_EXECUTE, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_READ,
            PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_READ,
            PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_READ};

    private FileTrees() {}

    /** The permission bits (0777) of a mode; setuid, setgid and sticky are not restored. */
    public static Set<PosixFilePermission> permissions(int mode) {
        Set<PosixFilePermission> s = EnumSet.noneOf(PosixFilePermission.class);
        for (int i = 0; i < BITS.length; i++) {
            if ((mode & (1 << i)) != 0) {
                s.add(BITS[i]);
            }
        }
        return s;
    }

    /**
     * Deletes a tree without following links, making read-only directories writable first. What another thread
     * or process deletes meanwhile is gone as wanted, not an error (a rank's area cleared for a launch while a
     * failed capture cleared its generation in it).
     */
    public static void delete(Path root) throws IOException {
        if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        Files.walkFileTree(root, new ConcurrentTreeVisitor() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                try {
                    Files.setPosixFilePermissions(dir, permissions(0700));
                } catch (NoSuchFileException gone) {
                    return FileVisitResult.SKIP_SUBTREE;
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.deleteIfExists(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            protected void leave(Path dir) throws IOException {
                Files.deleteIfExists(dir);
            }
        });
    }

    static void deleteQuietly(Path root, Exception primary) {
        try {
            delete(root);
        } catch (IOException e) {
            primary.addSuppressed(e);
        }
    }
}
