package io.ferry.agent.capture;

import java.io.IOException;

/** The process exited (or was killed) before or during its capture; no image of it counts. */
public final class ProcessGoneException extends IOException {
    public ProcessGoneException(int pid) {
        super("process " + pid + " exited during capture: no image was kept");
    }
}
