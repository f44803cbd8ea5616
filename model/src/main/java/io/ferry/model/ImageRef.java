package io.ferry.model;

/** One rank's image of one generation of one job; validated so it is safe to use in paths. */
public record ImageRef(String job, long generation, int rank) {
    public ImageRef {
        Names.requireJob(job);
        Names.requireGeneration(generation);
        Names.requireRank(rank);
    }

    @Override
    public String toString() {
        return job + "/" + generation + "/" + rank;
    }
}
