package io.ferry.agent;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.stream.Stream;

/** fsync of whole image trees: a rank's DONE means written, not durable; the agent makes it durable. */
final class Durability {
    private Durability() {}

    /** fsyncs every regular file and directory below {@code root}; returns the files' total size. */
    static long fsyncTree(Path root) throws IOException {
        List<Path> all;
        try (Stream<Path> s = Files.walk(root)) {
            all = s.toList();
        }
        long bytes = 0;
        for (Path p : all) {
            if (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
                try (FileChannel ch = FileChannel.open(p, StandardOpenOption.WRITE)) {
                    ch.force(true);
                    bytes += ch.size();
                }
            } else if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                fsyncDir(p);
            }
        }
        return bytes;
    }

    static void fsyncDir(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }
}
