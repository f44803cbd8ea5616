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
 * @param inFlight objects in transfer now
 */
public record StoreHealth(String circuit, long calls, long retries, long failed, long rejected, int inFlight) {
    public static final StoreHealth NONE = new StoreHealth("NONE", 0, 0, 0, 0, 0);

    /** One line for a terminal, e.g. {@code circuit CLOSED, 12 retries, 0 failed, 0 rejected}. */
    public String summary() {
        return "circuit " + circuit + ", " + calls + " calls, " + retries + " retries, " + failed + " failed, "
                + rejected + " rejected";
    }
}
