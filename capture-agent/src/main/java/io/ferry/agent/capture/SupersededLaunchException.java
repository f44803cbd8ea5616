package io.ferry.agent.capture;

import java.io.IOException;

/**
 * A start of the job gave up because a newer one came for every node while it was still being
 * put together (its ranks on other nodes will not come): nothing failed that the coordinator must
 * hear of, since the newer launch is already on its way here.
 */
public final class SupersededLaunchException extends IOException {
    SupersededLaunchException(String message, Throwable cause) {
        super(message, cause);
    }
}
