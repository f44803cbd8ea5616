package io.ferry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ferry.model.Durations;
import io.ferry.model.ImageRef;
import io.ferry.model.Manifest;
import io.ferry.model.Sizes;
import io.ferry.staging.ChunkQuarantine;
import io.ferry.staging.GcLease;
import io.ferry.staging.OpenedStore;
import io.ferry.staging.PackHeal;
import io.ferry.staging.PackQuarantine;
import io.ferry.staging.Repository;
import io.ferry.staging.StoreGc;
import io.ferry.staging.StoreRetention;
import io.ferry.staging.VerifyReport;
import io.ferry.staging.packs.PackKeys;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;

/** {@code ferry store ls|verify|prune|gc}. */
@Command(name = "store", mixinStandardHelpOptions = true, description = "Inspect, scrub, prune and collect a store.",
        subcommands = {StoreCommand.Ls.class, StoreCommand.Verify.class, StoreCommand.Prune.class,
                StoreCommand.Gc.class})
final class StoreCommand {
    abstract static class OnStore {
        @Parameters(index = "0", paramLabel = "URI",
                description = "Store URI: file:/path or a plain path, hdfs://namenode:port/path, s3://bucket/prefix.")
        String uri;
        @Option(names = "--set", paramLabel = "KEY=VALUE", description = "Configuration, repeatable.")
        Map<String, String> settings = new LinkedHashMap<>();
        @Option(names = "--json", description = "Print one JSON object instead of text.")
        boolean json;

        static final ObjectMapper JSON =
                new ObjectMapper();

        static void print(JsonNode n) throws IOException {
            System.out.println(JSON.writerWithDefaultPrettyPrinter().writeValueAsString(n));
        }
    }

    @Command(name = "ls", mixinStandardHelpOptions = true, description = "List jobs, generations and ranks in a store.")
    static final class Ls extends OnStore implements Callable<Integer> {
        @Override
        public Integer call() throws Exception {
            try (OpenedStore o = StoreOptions.open(uri, settings)) {
                Repository repo = o.pipeline().repository();
                List<Repository.GenerationListing> gens = repo.listGenerations();
                ObjectNode out = JSON.createObjectNode();
                ArrayNode rows = out.putArray("generations");
                if (!json) {
                    System.out.printf(Locale.ROOT, "%-24s %10s %6s %-12s %12s  %s%n", "JOB", "GENERATION", "RANKS",
                            "STATE", "RAW",
                            "KEY");
                }
                for (Repository.GenerationListing g : gens) {
                    long raw = 0;
                    Set<String> keyIds = new TreeSet<>(); // "" in the clear
                    for (int r : g.ranks()) {
                        try {
                            Manifest m = repo.readManifest(new ImageRef(g.job(),
                                    g.generation(), r)).manifest();
                            raw += m.rawBytes();
                            keyIds.add(m.keyId());
                        } catch (IOException e) {
                            raw = -1;
                            break;
                        }
                    }
                    if (json) {
                        rows.addObject().put("job", g.job()).put("generation", g.generation())
                                .put("ranks", g.ranks().size())
                                .put("state", g.committed() ? "established" : "open").put("rawBytes", raw)
                                .put("keyId", String.join(",", keyIds));
                    } else {
                        // The key id its images are sealed with ("clear" when not): what a key rotation waits on.
                        System.out.printf(Locale.ROOT, "%-24s %10d %6d %-12s %12s  %s%n", g.job(), g.generation(),
                                g.ranks().size(), g.committed() ? "established" : "open",
                                raw < 0 ? "unreadable" : Sizes.format(raw),
                                keyIds.stream().map(k -> k.isEmpty() ? "clear" : k)
                                        .collect(Collectors.joining(",")));
                    }
                }
                List<String> chunks = repo.listChunkKeys();
                long packs = repo.store().list(PackKeys.PACKS).stream()
                        .filter(k -> PackKeys.nameOf(k).isPresent()).count();
                if (json) {
                    out.put("chunkObjects", chunks.size()).put("packObjects", packs);
                    print(out);
                } else {
                    System.out.printf(Locale.ROOT, "%d generations, %d chunk objects, %d packs%n", gens.size(),
                            chunks.size(), packs);
                }
            }
            return 0;
        }
    }

    @Command(name = "verify", mixinStandardHelpOptions = true,
            description = {
                    "Verify every chunk (CRC32C, SHA-256), manifest and commit marker; exit 3 if anything is damaged.",
                    "Pushes reuse a chunk by its name without reading it back: run this on a schedule (with --repair)",
                    "so that a chunk that rotted on the store is not reused by every later generation."})
    static final class Verify extends OnStore implements Callable<Integer> {
        @Option(names = "--repair",
                description = {"Move every chunk found corrupt (and still corrupt when read again) to",
                "ferry/v1/quarantine/: the next push that needs it writes it again, healing every image that uses it.",
                "A pack with a damaged record: its sound records are copied out (moves), then it goes"
                        + " to ferry/v2/quarantine/;",
                "each damaged record is healed once a later push has written its blob again (moved to that copy)."})
        boolean repair;

        @Override
        public Integer call() throws Exception {
            try (OpenedStore o = StoreOptions.open(uri, settings)) {
                VerifyReport r = o.pipeline().verify(TerminalProgress.forStderr());
                ObjectNode out = JSON.valueToTree(r);
                out.put("ok", r.ok());
                if (!json) {
                    r.problems().forEach(p -> System.out.println(p));
                    System.out.printf(Locale.ROOT,
                            "%s: %d chunks (%s), %d manifests, %d snapshots checked, %d problems%n",
                            r.ok() ? "OK" : "DAMAGED", r.chunks(), Sizes.format(r.chunkBytes()), r.manifests(),
                            r.snapshots(), r.problems().size());
                }
                if (repair && !r.ok()) {
                    List<ChunkQuarantine.Outcome> done = new ArrayList<>(
                            ChunkQuarantine.repair(o.pipeline().repository(), r));
                    done.addAll(PackQuarantine.repair(o.pipeline().repository(), r));
                    long moved = done.stream().filter(ChunkQuarantine.Outcome::quarantined).count();
                    if (json) {
                        out.set("repair", JSON.valueToTree(done));
                    } else {
                        done.forEach(d -> System.out.println((d.quarantined() ? "quarantined " : "kept ") + d.key()
                                + ": " + d.detail()));
                        System.out.printf(Locale.ROOT,
                                "repair: %d corrupt chunk(s) or pack(s) quarantined; the next push that"
                                + " needs their bytes writes them again, which heals the images that"
                                + " use them (a damaged pack"
                                + " record at the next verify --repair)%n", moved);
                    }
                }
                if (repair) {
                    PackHeal.Healed healed = PackHeal.run(o.pipeline().repository());
                    if (json) {
                        out.set("healed", JSON.valueToTree(healed));
                    } else if (healed.healed() + healed.missing() > 0) {
                        healed.details().forEach(System.out::println);
                        System.out.printf(Locale.ROOT,
                                "heal: %d damaged pack record(s) healed from copies later pushes wrote;"
                                + " %d still without a copy (the next push that holds their bytes writes one)%n",
                                healed.healed(), healed.missing());
                    }
                }
                if (json) {
                    print(out);
                }
                return r.ok() ? 0 : 3;
            }
        }
    }

    @Command(name = "prune", mixinStandardHelpOptions = true,
            description = {"Drop a job's old generations from the store (markers first, then manifests); their chunks",
                    "go at the next `ferry store gc`. Never the newest established generation."})
    static final class Prune extends OnStore implements Callable<Integer> {
        @Option(names = "--job", required = true, paramLabel = "JOB")
        String job;
        @Option(names = "--keep-last", required = true, paramLabel = "N",
                description = "Established generations kept, newest first (>= 1).")
        int keepLast;
        @Option(names = "--keep-every", defaultValue = "0", paramLabel = "K",
                description = "Also keep every established generation that is a multiple of K (0: none).")
        int keepEvery;
        @Option(names = "--dry-run", description = "Say what would go; change nothing.")
        boolean dryRun;

        @Override
        public Integer call() throws Exception {
            try (OpenedStore o = StoreOptions.open(uri, settings)) {
                StoreRetention.Pruned p = StoreRetention.prune(o.pipeline()
                        .repository(), job, keepLast, keepEvery, dryRun);
                if (json) {
                    ObjectNode out = JSON.valueToTree(p);
                    print(out.put("dryRun", dryRun));
                } else {
                    System.out.printf(Locale.ROOT, "%s %s: %s generations %s; kept %s%n",
                            dryRun ? "would prune" : "pruned", job, p.dropped().size(), p.dropped(), p.kept());
                }
            }
            return 0;
        }
    }

    @Command(name = "gc", mixinStandardHelpOptions = true,
            description = {"Collect chunks no manifest references, in two runs at least --grace apart (safe while",
                    "pushes run elsewhere): the first moves them aside, the next deletes those still unreferenced.",
                    "One gc at a time per store: a run holds the store's gc lease (ferry/v1/gc/lease/), and a second",
                    "refuses, naming the holder and when its lease expires."})
    static final class Gc extends OnStore implements Callable<Integer> {
        @Option(names = "--grace", defaultValue = "6h", paramLabel = "DURATION",
                description = "At least the longest push to this store takes. Default ${DEFAULT-VALUE}.")
        String grace;
        @Option(names = "--dry-run", description = "Say what the first step would move aside; change nothing.")
        boolean dryRun;
        @Option(names = "--passes", defaultValue = "0", paramLabel = "N",
                description = {
                        "Work through the pack folders in N passes (1-256), reading the manifests once per pass,",
                        "so memory holds one pass's live records. Default: enough for a quarter of the heap."})
        int passes;
        @Option(names = "--lease", defaultValue = "5m", paramLabel = "DURATION",
                description = {"How long the store's gc",
                "lease lasts unless renewed (every third of it, while the run goes on): a gc that crashed on another",
                "host keeps others out this long (one killed on this host, not at all). Default ${DEFAULT-VALUE}."})
        String lease;

        @Override
        public Integer call() throws Exception {
            if (passes < 0 || passes > 256) {
                throw new CommandLine.ParameterException(new CommandLine(this),
                        "--passes must be 1 to 256 (or 0 for as many as the heap needs), got " + passes);
            }
            Duration g = Durations.parse(grace);
            try (OpenedStore o = StoreOptions.open(uri, settings)) {
                StoreGc.Collected c = StoreGc.run(o.pipeline().repository(), g,
                        Clock.systemUTC(), dryRun, passes, GcLease.Holder.current(),
                        Durations.parse(lease));
                if (json) {
                    print(JSON.createObjectNode().put("dryRun", dryRun).put("referenced", c.referenced())
                            .put("deleted", c.deleted()).put("deletedBytes", c.deletedBytes())
                            .put("restored", c.restored())
                            .put("fossilized", c.fossilized()).put("fossilizedBytes", c.fossilizedBytes())
                            .put("repacked", c.repacked()).put("repackedBytes", c.repackedBytes())
                            .put("abandoned", c.abandoned())
                            .put("runAgainAfter", c.waitUntil() == null ? null : c.waitUntil().toString()));
                    return 0;
                }
                System.out.printf(Locale.ROOT,
                        "%d chunks and packs referenced; deleted %d unreferenced (%s), put back %d;"
                                + " %s %d packs (%s live copied)%s; %s %d (%s) aside; %s %d temporary files"
                                + " of interrupted puts%s%n",
                        c.referenced(), c.deleted(), Sizes.format(c.deletedBytes()), c.restored(),
                        dryRun ? "would repack" : "repacked", c.repacked(), Sizes.format(c.repackedBytes()),
                        c.repacked() > 0 ? " (under half live)" : "", dryRun ? "would move" : "moved", c.fossilized(),
                        Sizes.format(c.fossilizedBytes()), dryRun ? "would delete" : "deleted", c.abandoned(),
                        c.waitUntil() == null ? "" : "; run again after " + c.waitUntil() + " to delete what is aside");
            }
            return 0;
        }
    }
}
