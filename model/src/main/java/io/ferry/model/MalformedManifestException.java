package io.ferry.model;

import java.io.IOException;

/** A manifest or snapshot marker whose bytes do not decode to a valid record. Never retried. */
public class MalformedManifestException extends IOException {
    public MalformedManifestException(String message, Throwable cause) {
        super(message, cause);
    }
}
