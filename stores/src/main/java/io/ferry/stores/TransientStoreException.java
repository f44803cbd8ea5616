package io.ferry.stores;

/** A failure that may pass: a full or unreachable store, a timeout. Retry with backoff. */
public class TransientStoreException extends StoreException {
    public TransientStoreException(String message, Throwable cause) {
        super(message, cause);
    }

    @Override
    public boolean isTransient() {
        return true;
    }
}
