package io.ferry.model;

/** An instruction on the commands topic, keyed by the node (or "coordinator") that carries it out. */
public sealed interface Command {
    String job();

    /** Agent: quiesce and capture every rank of this node for {@code generation}. */
    record Capture(String job, long generation) implements Command {
        public Capture {
            Names.requireJob(job);
            Names.requireGeneration(generation);
        }
    }

    /** Agent: stop every rank and relaunch them from {@code generation} (-1: from the start). */
    record Restart(String job, long generation, String cause) implements Command {
        public Restart {
            Names.requireJob(job);
        }
    }

    /** Coordinator: take a checkpoint now (from {@code ferry checkpoint}). */
    record RequestCheckpoint(String job) implements Command {
        public RequestCheckpoint {
            Names.requireJob(job);
        }
    }
}
