package io.ferry.staging.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** Unwraps failures that crossed a thread boundary back into what the caller can handle. */
final class Failures {
    private Failures() {}

    static IOException asIOException(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException
                || t instanceof UncheckedIOException) && t.getCause() != null) {
            t = t.getCause();
        }
        if (t instanceof IOException io) {
            return io;
        }
        if (t instanceof RuntimeException re) {
            throw re;
        }
        if (t instanceof Error err) {
            throw err;
        }
        return new IOException(t);
    }
}
