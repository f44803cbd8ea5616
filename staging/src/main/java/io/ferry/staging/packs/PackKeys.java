package io.ferry.staging.packs;

import io.ferry.model.Names;

import java.util.Optional;

/** Where packs lie on a store: {@code ferry/v2/packs/<first 2 hex>/<64 hex>}. */
public final class PackKeys {
    public static final String PACKS = "ferry/v2/packs/";

    private PackKeys() {}

    public static String packKey(String name) {
        if (!Names.isSha256Hex(name)) {
            throw new IllegalArgumentException("a pack name is 64 lower-case hex digits, got " + name);
        }
        return PACKS + name.substring(0, 2) + "/" + name;
    }

    /** The pack name a key names, or empty for a key that is not a pack's. */
    public static Optional<String> nameOf(String key) {
        String name = key.substring(key.lastIndexOf('/') + 1);
        if (!key.startsWith(PACKS) || !Names.isSha256Hex(name)
                || !key.equals(PACKS + name.substring(0, 2) + "/" + name)) {
            return Optional.empty();
        }
        return Optional.of(name);
    }
}
