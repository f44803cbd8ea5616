package io.ferry.stores;

/** A failure that a retry will not fix: permission denied, invalid request. */
public class PermanentStoreException extends StoreException {
    public PermanentStoreException(String message, Throwable cause) {
        super(message, cause);
    }

    @Override
    public boolean isTransient() {
        return false;
    }
}
