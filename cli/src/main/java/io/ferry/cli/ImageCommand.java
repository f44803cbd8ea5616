package io.ferry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ferry.model.ImageRef;
import io.ferry.model.RankSet;
import io.ferry.model.Sizes;
import io.ferry.staging.OpenedStore;
import io.ferry.staging.PullImage;
import io.ferry.staging.PullResult;
import io.ferry.staging.PushImage;
import io.ferry.staging.PushResult;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/** {@code ferry image push|pull}: one rank's image, or a node's ranks together, between directories and a store. */
@Command(name = "image", mixinStandardHelpOptions = true,
        description = "Push or pull one rank's image, or a node's ranks.",
        subcommands = {ImageCommand.Push.class, ImageCommand.Pull.class})
final class ImageCommand {
    /** One rank, or a set of them. */
    static final class Ranks {
        @Option(names = "--rank", required = true, paramLabel = "R", description = "Rank (>= 0): DIR is its image.")
        Integer rank;
        @Option(names = "--ranks", required = true, paramLabel = "SET",
                description = "Ranks, e.g. 0-15 or 0,2,4: DIR/<rank> is each one's image.")
        String set;

        /** The ranks named, in order; at least one. */
        List<Integer> list() {
            if (rank != null) {
                return List.of(rank);
            }
            List<Integer> out = RankSet.parse(set).toList();
            if (out.isEmpty()) {
                throw new IllegalArgumentException("--ranks names no rank");
            }
            return out;
        }
    }

    @Command(name = "push", mixinStandardHelpOptions = true,
            description = {"Chunk, compress and write an image directory to a store; the manifest is written last.",
                    "With --ranks, DIR holds one directory per rank, named by its number (DIR/0, DIR/1, ...): they are"
                            + " pushed together, as a node's agent pushes its ranks (shared packs, one manifest each),"
                            + " by one command."})
    static final class Push implements Callable<Integer> {
        @Parameters(index = "0", paramLabel = "DIR", description = "Image directory (with --ranks: their parent).")
        Path dir;
        @Mixin
        ImageOptions image;
        @ArgGroup(exclusive = true, multiplicity = "1")
        Ranks ranks;
        @Mixin
        StoreOptions store;
        @CommandLine.Option(names = "--json", description = "Print one JSON object instead of text.")
        boolean json;

        @Override
        public Integer call() throws Exception {
            PrintWriter out = Invocation.current().out(); // the callback below may run on a worker thread
            List<PushImage> images = images();
            try (OpenedStore o = store.open()) {
                if (ranks.rank != null) {
                    PushResult r = o.pipeline().push(dir, images.get(0).ref(), TerminalProgress.forStderr());
                    out.println(json ? json(pushJson(JSON.createObjectNode(), r)) : summary(r));
                    return 0;
                }
                List<PushResult> pushed = new ArrayList<>();
                long t0 = System.nanoTime();
                o.pipeline().pushAll(images, TerminalProgress.forStderr(), (i, r) -> {
                    pushed.add(r);
                    if (!json) {
                        out.println(summary(r));
                    }
                });
                double seconds = (System.nanoTime() - t0) / 1e9;
                long raw = pushed.stream().mapToLong(PushResult::rawBytes).sum();
                long stored = pushed.stream().mapToLong(PushResult::storedBytes).sum();
                if (json) {
                    ObjectNode n = JSON.createObjectNode().put("rawBytes", raw).put("storedBytes", stored)
                            .put("seconds", seconds);
                    ArrayNode a = n.putArray("images");
                    pushed.forEach(r -> pushJson(a.addObject(), r));
                    out.println(json(n));
                } else {
                    out.println(String.format(Locale.ROOT, "pushed %d ranks of %s generation %d together: %s raw,"
                                    + " %s written, %.2f s, %.0f MB/s", pushed.size(), image.job, image.generation,
                            Sizes.format(raw), Sizes.format(stored), seconds, raw / 1e6 / Math.max(1e-9, seconds)));
                }
            }
            return 0;
        }

        /** The images to push, each checked to be a directory before anything is opened. */
        private List<PushImage> images() {
            if (ranks.rank != null) {
                return List.of(new PushImage(dir, image.ref(ranks.rank)));
            }
            List<PushImage> out = new ArrayList<>();
            for (int r : ranks.list()) {
                ImageRef ref = image.ref(r);
                Path d = dir.resolve(Integer.toString(r));
                if (!Files.isDirectory(d, LinkOption.NOFOLLOW_LINKS)) {
                    throw new IllegalArgumentException("rank " + r + " has no image directory " + d);
                }
                out.add(new PushImage(d, ref));
            }
            return out;
        }

        private static ObjectNode pushJson(ObjectNode n, PushResult r) {
            return n.put("image", r.image().toString()).put("rawBytes", r.rawBytes()).put("files", r.files())
                    .put("chunks", r.chunks()).put("zeroChunks", r.zeroChunks()).put("knownChunks", r.knownChunks())
                    .put("newChunks", r.newChunks()).put("storedBytes", r.storedBytes())
                    .put("manifestSha256", r.manifestSha256()).put("seconds", r.elapsed().toNanos() / 1e9);
        }
    }

    @Command(name = "pull", mixinStandardHelpOptions = true,
            description = {"Fetch, verify and restore an image into DIR (absent or empty); DIR appears only complete.",
                    "With --ranks, each rank goes to DIR/<rank>: they are pulled together, as a node restores its"
                            + " ranks (what they share is read once), by one command; each appears only complete, and"
                            + " a failure before the first leaves none. Images of the chunk layout (older stores) are"
                            + " pulled one after another."})
    static final class Pull implements Callable<Integer> {
        @Mixin
        ImageOptions image;
        @ArgGroup(exclusive = true, multiplicity = "1")
        Ranks ranks;
        @Mixin
        StoreOptions store;
        @Parameters(index = "0", paramLabel = "DIR",
                description = "Destination directory (with --ranks: their parent).")
        Path dir;
        @CommandLine.Option(names = "--json", description = "Print one JSON object instead of text.")
        boolean json;

        @Override
        public Integer call() throws Exception {
            PrintWriter out = Invocation.current().out();
            List<Integer> set = ranks.list();
            try (OpenedStore o = store.open()) {
                long t0 = System.nanoTime();
                List<PullResult> pulled = ranks.rank != null
                        ? List.of(o.pipeline().pull(image.ref(ranks.rank), dir, TerminalProgress.forStderr()))
                        : o.pipeline().pullAll(set.stream().map(r -> new PullImage(image.ref(r),
                                dir.resolve(Integer.toString(r)))).toList(), TerminalProgress.forStderr());
                double seconds = (System.nanoTime() - t0) / 1e9;
                if (pulled.stream().anyMatch(r -> !r.committed())) {
                    Invocation.current().err().println("ferry: warning: snapshot " + image.job + "/" + image.generation
                            + " has no commit marker; do not restart from "
                            + (pulled.size() == 1 ? "this image" : "these images"));
                }
                if (json && ranks.rank != null) {
                    out.println(json(pullJson(JSON.createObjectNode(), pulled.get(0))));
                } else if (json) {
                    ObjectNode n = JSON.createObjectNode()
                            .put("rawBytes", pulled.stream().mapToLong(PullResult::rawBytes).sum()).put("readBytes",
                                    pulled.stream().mapToLong(PullResult::readBytes).sum()).put("seconds", seconds);
                    ArrayNode a = n.putArray("images");
                    pulled.forEach(r -> pullJson(a.addObject(), r));
                    out.println(json(n));
                } else {
                    for (PullResult r : pulled) {
                        out.println(String.format(Locale.ROOT,
                                "pulled %s into %s: %s raw in %d files, %d chunks fetched (%s),"
                                        + " verified, %.2f s, %.0f MB/s",
                                r.image(), r.directory(), Sizes.format(r.rawBytes()), r.files(), r.fetchedChunks(),
                                Sizes.format(r.fetchedBytes()), r.elapsed().toNanos() / 1e9, r.rawMBps()));
                    }
                    if (ranks.rank == null) {
                        long raw = pulled.stream().mapToLong(PullResult::rawBytes).sum();
                        out.println(String.format(Locale.ROOT, "pulled %d ranks of %s generation %d together: %s raw,"
                                        + " %s read, %.2f s, %.0f MB/s", pulled.size(), image.job, image.generation,
                                Sizes.format(raw), Sizes.format(pulled.stream().mapToLong(PullResult::readBytes).sum()),
                                seconds, raw / 1e6 / Math.max(1e-9, seconds)));
                    }
                }
            }
            return 0;
        }

        private static ObjectNode pullJson(ObjectNode n, PullResult r) {
            return n.put("image", r.image().toString()).put("directory", r.directory().toString())
                    .put("rawBytes", r.rawBytes()).put("files", r.files()).put("fetchedChunks", r.fetchedChunks())
                    .put("fetchedBytes", r.fetchedBytes()).put("readBytes", r.readBytes())
                    .put("committed", r.committed()).put("seconds", r.elapsed().toNanos() / 1e9);
        }
    }

    private static final ObjectMapper JSON =
            new ObjectMapper();

    private static String json(JsonNode n) throws IOException {
        return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(n);
    }

    static String summary(PushResult r) {
        String ratio = r.storedBytes() == 0 ? "nothing new"
                : String.format(Locale.ROOT, "%.2fx", (double) r.rawBytes() / r.storedBytes());
        return String.format(Locale.ROOT,
                "pushed %s: %s raw in %d files, %d chunks (%d zero, %d already stored, %d new), %s written"
                        + " (%s), %.2f s, %.0f MB/s",
                r.image(), Sizes.format(r.rawBytes()), r.files(), r.chunks(), r.zeroChunks(), r.knownChunks(),
                r.newChunks(), Sizes.format(r.storedBytes()), ratio, r.elapsed().toNanos() / 1e9, r.rawMBps());
    }
}
