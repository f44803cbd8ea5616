package io.ferry.cli;

import io.ferry.model.ImageRef;
import picocli.CommandLine.Option;

/** {@code --job --generation --rank}, validated into an {@link ImageRef} before any I/O. */
final class ImageOptions {
    @Option(names = "--job", required = true, paramLabel = "JOB", description = "Job id: [A-Za-z0-9._-]{1,128}.")
    String job;

    @Option(names = "--generation", required = true, paramLabel = "G", description = "Generation (>= 0).")
    long generation;

    @Option(names = "--rank", required = true, paramLabel = "R", description = "Rank (>= 0).")
    int rank;

    ImageRef ref() {
        return new ImageRef(job, generation, rank);
    }
}
