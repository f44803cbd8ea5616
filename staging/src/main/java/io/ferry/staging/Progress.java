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

    /**
     * A push found {@code rawBytes} more of what it read new to the store, and wrote them as
     * {@code storedBytes} (compressed, in pack records); called before the {@link #advance} of the
     * bytes they were read in. Pushes that deduplicate say so as they go: what a snapshot will
     * write becomes known blob by blob, before the push ends. Nothing by default.
     */
    default void wrote(long rawBytes, long storedBytes) {}

    void finish();
}
