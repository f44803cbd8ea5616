package io.ferry.staging.crypt;

import java.io.IOException;

/**
 * An encrypted image or record cannot be opened because no key is configured, or because the
 * configured key is not the one it was sealed with. Not damage: nothing is quarantined for it, and
 * retrying with the same configuration fails again. Its message is one line fit for a user and
 * names key ids only, never a key.
 */
public final class EncryptionKeyException extends IOException {
    public EncryptionKeyException(String message) {
        super(message);
    }

    /** What to say when something sealed with key {@code sealedWith} meets {@code configured} (null: no key). */
    public static EncryptionKeyException of(String what, String sealedWith, Keys configured) {
        return new EncryptionKeyException(what + " is encrypted with key id " + sealedWith + "; "
                + (configured == null ? "no key is configured: set " + Keys.KEY_FILE.name() + " or " + Keys.VARIABLE
                : "the configured key has id " + configured.id() + (configured.previous().isEmpty()
                        ? " (a key of before a rotation goes in " + Keys.PREVIOUS_KEY_FILES.name() + ")"
                        : ", the previous ones " + configured.previous().stream().map(Keys::id).toList())));
    }
}
