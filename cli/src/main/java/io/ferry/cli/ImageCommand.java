package io.ferry.cli;

import io.ferry.model.ImageRef;
import io.ferry.model.Sizes;
import io.ferry.staging.PullResult;
import io.ferry.staging.PushResult;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;

/** {@code ferry image push|pull}: one rank's image between a directory and a store. */
@Command(name = "image", mixinStandardHelpOptions = true, description = "Push or pull one rank's image.",
        subcommands = {ImageCommand.Push.class, ImageCommand.Pull.class})
final class ImageCommand {
    @Command(name = "push", mixinStandardHelpOptions = true,
            description = "Chunk, compress and write an image directory to a store; the manifest is written last.")
    static final class Push implements Callable<Integer> {
        @Parameters(index = "0", paramLabel = "DIR", description = "Image directory.")
        Path dir;
        @Mixin
        ImageOptions image;
        @Mixin
        StoreOptions store;
        @picocli.CommandLine.Option(names = "--json", description = "Print one JSON object instead of text.")
        boolean json;

        @Override
        public Integer call() throws Exception {
            ImageRef ref = image.ref();
            try (io.ferry.staging.OpenedStore o = store.open()) {
                PushResult r = o.pipeline().push(dir, ref, TerminalProgress.forStderr());
                System.out.println(json ? json(JSON.createObjectNode().put("image", r.image().toString())
                        .put("rawBytes", r.rawBytes()).put("files", r.files()).put("chunks", r.chunks())
                        .put("zeroChunks", r.zeroChunks()).put("knownChunks", r.knownChunks()).put("newChunks", r.newChunks())
                        .put("storedBytes", r.storedBytes()).put("manifestSha256", r.manifestSha256())
                        .put("seconds", r.elapsed().toNanos() / 1e9)) : summary(r));
            }
            return 0;
        }
    }

    @Command(name = "pull", mixinStandardHelpOptions = true,
            description = "Fetch, verify and restore an image into DIR (absent or empty); DIR appears only complete.")
    static final class Pull implements Callable<Integer> {
        @Mixin
        ImageOptions image;
        @Mixin
        StoreOptions store;
        @Parameters(index = "0", paramLabel = "DIR", description = "Destination directory.")
        Path dir;
        @picocli.CommandLine.Option(names = "--json", description = "Print one JSON object instead of text.")
        boolean json;

        @Override
        public Integer call() throws Exception {
            ImageRef ref = image.ref();
            try (io.ferry.staging.OpenedStore o = store.open()) {
                PullResult r = o.pipeline().pull(ref, dir, TerminalProgress.forStderr());
                if (!r.committed()) {
                    System.err.println("ferry: warning: snapshot " + ref.job() + "/" + ref.generation()
                            + " has no commit marker; do not restart from this image");
                }
                if (json) {
                    System.out.println(json(JSON.createObjectNode().put("image", r.image().toString())
                            .put("directory", r.directory().toString()).put("rawBytes", r.rawBytes()).put("files", r.files())
                            .put("fetchedChunks", r.fetchedChunks()).put("fetchedBytes", r.fetchedBytes())
                            .put("readBytes", r.readBytes()).put("committed", r.committed()).put("seconds", r.elapsed().toNanos() / 1e9)));
                    return 0;
                }
                System.out.println(String.format(Locale.ROOT,
                        "pulled %s into %s: %s raw in %d files, %d chunks fetched (%s), verified, %.2f s, %.0f MB/s",
                        ref, r.directory(), Sizes.format(r.rawBytes()), r.files(), r.fetchedChunks(),
                        Sizes.format(r.fetchedBytes()), r.elapsed().toNanos() / 1e9, r.rawMBps()));
            }
            return 0;
        }
    }

    private static final com.fasterxml.jackson.databind.ObjectMapper JSON = new com.fasterxml.jackson.databind.ObjectMapper();

    private static String json(com.fasterxml.jackson.databind.JsonNode n) throws java.io.IOException {
        return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(n);
    }

    static String summary(PushResult r) {
        double ratio = r.storedBytes() == 0 ? Double.POSITIVE_INFINITY : (double) r.rawBytes() / r.storedBytes();
        return String.format(Locale.ROOT,
                "pushed %s: %s raw in %d files, %d chunks (%d zero, %d already stored, %d new), %s written"
                        + " (%.2fx), %.2f s, %.0f MB/s",
                r.image(), Sizes.format(r.rawBytes()), r.files(), r.chunks(), r.zeroChunks(), r.knownChunks(),
                r.newChunks(), Sizes.format(r.storedBytes()), ratio, r.elapsed().toNanos() / 1e9, r.rawMBps());
    }
}
