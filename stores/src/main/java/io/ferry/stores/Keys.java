package io.ferry.stores;

/** Object keys: '/'-separated, each part of {@code [A-Za-z0-9._-]}, not '.' or '..' or hidden. */
public final class Keys {
    private Keys() {}

    public static String require(String key) {
        if (key == null || key.isEmpty() || key.length() > 1024) {
            throw new IllegalArgumentException("invalid object key '" + key + "'");
        }
        for (String part : key.split("/", -1)) {
            if (part.isEmpty() || part.startsWith(".") || !part.matches("[A-Za-z0-9._-]+")) {
                throw new IllegalArgumentException("invalid object key '" + key + "': bad part '" + part + "'");
            }
        }
        return key;
    }
}
