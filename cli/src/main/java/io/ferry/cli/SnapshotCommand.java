package io.ferry.cli;

import io.ferry.model.Names;
import io.ferry.model.SnapshotMarker;
import io.ferry.staging.OpenedStore;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.util.concurrent.Callable;

/** {@code ferry snapshot commit}: write a generation's commit marker once every rank is stored. */
@Command(name = "snapshot", mixinStandardHelpOptions = true, description = "Snapshot commit markers.",
        subcommands = SnapshotCommand.Commit.class)
final class SnapshotCommand {
    @Command(name = "commit", mixinStandardHelpOptions = true,
            description = "Check that ranks 0..N-1 have manifests, then write the SNAPSHOT marker (last, atomically).")
    static final class Commit implements Callable<Integer> {
        @Option(names = "--job", required = true, paramLabel = "JOB")
        String job;
        @Option(names = "--generation", required = true, paramLabel = "G")
        long generation;
        @Option(names = "--ranks", required = true, paramLabel = "N", description = "Number of ranks in the snapshot.")
        int ranks;
        @Mixin
        StoreOptions store;
        @Mixin
        Report report;

        @Override
        public Integer call() throws Exception {
            Names.requireJob(job);
            try (OpenedStore o = store.open()) {
                SnapshotMarker m = o.pipeline().repository().commitSnapshot(job, generation, ranks);
                report.print(System.out,
                        "established " + m.job() + "/" + m.generation() + " (" + m.ranks() + " ranks) on "
                        + o.store().uri(), "job", m.job(), "generation", m.generation(), "ranks", m.ranks(),
                        "store", o.store().uri().toString());
            }
            return 0;
        }
    }
}
