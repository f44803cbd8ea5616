package io.ferry.agent;

import io.ferry.agent.capture.RestartRefusedException;
import io.ferry.agent.capture.SupersededLaunchException;
import io.ferry.model.MalformedManifestException;
import io.ferry.staging.ImageCorruptException;
import io.ferry.stores.StoreException;

import java.io.IOException;

/**
 * What a failed restore says about the generation it tried, from the exception's causes. Only
 * proof sets a generation aside: bytes or a manifest that do not verify, a snapshot the store
 * does not hold, a restart the checkpointer refused. A store that is away is tried again by the
 * node, then by the coordinator; anything else (a program or checkpointer missing on this node,
 * a store this node cannot open, an I/O error on its disk) is tried again by the coordinator
 * after its backoff, and fails the job with its reason after {@code recovery.max-attempts}.
 */
final class RestoreErrors {
    private RestoreErrors() {}

    /** The commit marker of a generation is not on the store: the snapshot is not there to restore. */
    static final class NotCommitted extends IOException {
        NotCommitted(String message) {
            super(message);
        }
    }

    /**
     * Whether a restore failed only because the store could not be reached: a transient store
     * error somewhere in the causes, and nothing that says the data is bad.
     */
    static boolean storeUnreachable(Throwable e) {
        boolean transientSeen = false;
        for (Throwable t = e; t != null; t = next(t)) {
            if (proof(t)) {
                return false;
            }
            if (t instanceof StoreException s) {
                if (!s.isTransient()) {
                    return false;
                }
                transientSeen = true;
            }
        }
        return transientSeen;
    }

    /** Whether the causes prove the generation's data unusable (then it is set aside for the run). */
    static boolean provenBad(Throwable e) {
        for (Throwable t = e; t != null; t = next(t)) {
            if (proof(t)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether the launch gave up for a newer one of its job already received
     * ({@link io.ferry.agent.capture.SupersededLaunchException}): nothing to report, the newer one is on its way.
     */
    static boolean superseded(Throwable e) {
        for (Throwable t = e; t != null; t = next(t)) {
            if (t instanceof SupersededLaunchException) {
                return true;
            }
        }
        return false;
    }

    private static boolean proof(Throwable t) {
        return t instanceof ImageCorruptException || t instanceof MalformedManifestException
                || t instanceof RestartRefusedException || t instanceof NotCommitted;
    }

    private static Throwable next(Throwable t) {
        return t.getCause() == t ? null : t.getCause();
    }
}
