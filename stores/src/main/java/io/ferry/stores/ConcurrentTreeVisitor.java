package io.ferry.stores;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;

/**
 * A file-tree visitor for a tree that others change while it is walked (a put renaming its temporary file
 * into place, a gc or a launch deleting a directory): an entry gone since its directory was listed is
 * skipped, not an error. Any other failure ends the walk with it. {@link #leave} is called for each
 * directory whose entries were all visited.
 */
public abstract class ConcurrentTreeVisitor extends SimpleFileVisitor<Path> {
    @Override
    public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
        if (e instanceof NoSuchFileException) {
            return FileVisitResult.CONTINUE;
        }
        throw e;
    }

    @Override
    public final FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
        if (e != null && !(e instanceof NoSuchFileException)) {
            throw e;
        }
        leave(dir);
        return FileVisitResult.CONTINUE;
    }

    /** After a directory's entries: nothing here. */
    protected void leave(Path dir) throws IOException {
    }
}
