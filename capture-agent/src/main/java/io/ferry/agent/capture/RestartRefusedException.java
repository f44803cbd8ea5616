package io.ferry.agent.capture;

import java.io.IOException;

/**
 * The checkpointer ran on an image and refused it: {@code dmtcp_restart} exited or never had its
 * processes running again, {@code criu restore} failed, or the directory holds no image of the
 * method at all. Proof against the image, as a bad checksum is: the job falls back to an older
 * generation. A checkpointer that could not be started (not installed on this node) is a plain
 * {@link IOException}, which says nothing against the image.
 */
public class RestartRefusedException extends IOException {
    public RestartRefusedException(String message, Throwable cause) {
        super(message, cause);
    }
}
