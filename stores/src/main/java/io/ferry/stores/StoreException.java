package io.ferry.stores;

import java.io.IOException;

/** A store operation that failed; its subtype says whether retrying may help. */
public abstract class StoreException extends IOException {
    protected StoreException(String message, Throwable cause) {
        super(message, cause);
    }

    /** Whether the same call may succeed if retried later. */
    public abstract boolean isTransient();
}
