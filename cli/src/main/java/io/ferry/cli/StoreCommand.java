package io.ferry.cli;

import io.ferry.model.Sizes;
import io.ferry.staging.Repository;
import io.ferry.staging.VerifyReport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code ferry store ls|verify}. */
@Command(name = "store", mixinStandardHelpOptions = true, description = "Inspect and scrub a store.",
        subcommands = {StoreCommand.Ls.class, StoreCommand.Verify.class})
final class StoreCommand {
    abstract static class OnStore {
        @Parameters(index = "0", paramLabel = "URI", description = "Store URI: file:/path or a plain path, hdfs://namenode:port/path, s3://bucket/prefix.")
        String uri;
        @Option(names = "--set", paramLabel = "KEY=VALUE", description = "Configuration, repeatable.")
        Map<String, String> settings = new LinkedHashMap<>();
    }

    @Command(name = "ls", mixinStandardHelpOptions = true, description = "List jobs, generations and ranks in a store.")
    static final class Ls extends OnStore implements Callable<Integer> {
        @Override
        public Integer call() throws Exception {
            try (io.ferry.staging.OpenedStore o = StoreOptions.open(uri, settings)) {
                Repository repo = o.pipeline().repository();
                List<Repository.GenerationListing> gens = repo.listGenerations();
                System.out.printf(Locale.ROOT, "%-24s %10s %6s %-12s %12s%n", "JOB", "GENERATION", "RANKS", "STATE", "RAW");
                for (Repository.GenerationListing g : gens) {
                    long raw = 0;
                    for (int r : g.ranks()) {
                        try {
                            raw += repo.readManifest(new io.ferry.model.ImageRef(g.job(), g.generation(), r))
                                    .manifest().rawBytes();
                        } catch (java.io.IOException e) {
                            raw = -1;
                            break;
                        }
                    }
                    System.out.printf(Locale.ROOT, "%-24s %10d %6d %-12s %12s%n", g.job(), g.generation(),
                            g.ranks().size(), g.committed() ? "established" : "open",
                            raw < 0 ? "unreadable" : Sizes.format(raw));
                }
                List<String> chunks = repo.listChunkKeys();
                System.out.printf(Locale.ROOT, "%d generations, %d chunk objects%n", gens.size(), chunks.size());
            }
            return 0;
        }
    }

    @Command(name = "verify", mixinStandardHelpOptions = true,
            description = "Verify every chunk (CRC32C, SHA-256), manifest and commit marker; exit 3 if anything is damaged.")
    static final class Verify extends OnStore implements Callable<Integer> {
        @Override
        public Integer call() throws Exception {
            try (io.ferry.staging.OpenedStore o = StoreOptions.open(uri, settings)) {
                VerifyReport r = o.pipeline().verify(TerminalProgress.forStderr());
                r.problems().forEach(p -> System.out.println(p));
                System.out.printf(Locale.ROOT, "%s: %d chunks (%s), %d manifests, %d snapshots checked, %d problems%n",
                        r.ok() ? "OK" : "DAMAGED", r.chunks(), Sizes.format(r.chunkBytes()), r.manifests(),
                        r.snapshots(), r.problems().size());
                return r.ok() ? 0 : 3;
            }
        }
    }
}
