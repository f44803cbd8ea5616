package io.ferry.stores;

import java.net.URI;
import java.util.Map;
import java.util.Set;

/** Opens stores of one URI scheme; registered with {@link Stores#register}. */
public interface StoreProvider {
    /** The option keys this provider accepts; any other key is refused at open. */
    Set<String> optionKeys();

    Store open(URI uri, Map<String, String> options) throws StoreException;
}
