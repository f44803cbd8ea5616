package io.ferry.cli;

import io.ferry.model.ImageRef;
import picocli.CommandLine.Option;

/** {@code --job --generation}, validated into an {@link ImageRef} with its rank before any I/O. */
final class ImageOptions {
    @Option(names = "--job", required = true, paramLabel = "JOB", description = "Job id: [A-Za-z0-9._-]{1,128}.")
    String job;

    @Option(names = "--generation", required = true, paramLabel = "G", description = "Generation (>= 0).")
    long generation;

    ImageRef ref(int rank) {
        return new ImageRef(job, generation, rank);
    }
}
