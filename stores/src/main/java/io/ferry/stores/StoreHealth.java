package io.ferry.stores;

/**
 * What a store's resilience layer has seen since it was opened.
 *
 * @param circuit  {@code CLOSED} (normal), {@code OPEN} (store considered down: calls fail fast),
 *                 {@code HALF_OPEN} (probing), or {@code NONE} for a store without a breaker
 * @param calls    store calls made (each counted once, however many tries it took)
 * @param retries  tries after the first, over all calls
 * @param failed   calls that failed after their last try
 * @param rejected calls refused without trying because the circuit was open
 */
public record StoreHealth(String circuit, long calls, long retries, long failed, long rejected) {
    public static final StoreHealth NONE = new StoreHealth("NONE", 0, 0, 0, 0);
    /** A store with a breaker that has had nothing go wrong. */
    public static final StoreHealth HEALTHY = new StoreHealth("CLOSED", 0, 0, 0, 0);

    /** Whether anything worth reporting differs: the circuit or a failure count (not the call count). */
    public boolean sameOutcomes(StoreHealth o) {
        return circuit.equals(o.circuit) && retries == o.retries && failed == o.failed && rejected == o.rejected;
    }

    /** One line for a terminal, e.g. {@code circuit CLOSED, 12 retries, 0 failed, 0 rejected}. */
    public String summary() {
        return "circuit " + circuit + ", " + calls + " calls, " + retries + " retries, " + failed + " failed, "
                + rejected + " rejected";
    }
}
