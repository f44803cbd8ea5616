package io.ferry.staging;

/** Progress of a long push or pull; called from worker threads, so implementations are thread-safe. */
public interface Progress {
    Progress NONE = new Progress() {
        @Override
        public void start(String what, long total, Unit unit) {}

        @Override
        public void advance(long bytes) {}

        @Override
        public void finish() {}
    };

    /** What {@link #start} counts. */
    enum Unit { BYTES, OBJECTS }

    void start(String what, long total, Unit unit);

    void advance(long bytes);

    void finish();
}
