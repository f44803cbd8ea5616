package io.ferry.stores;

/** The key names no complete object. */
public class ObjectNotFoundException extends PermanentStoreException {
    public ObjectNotFoundException(String key, String store) {
        super("no object " + key + " in " + store, null);
    }
}
