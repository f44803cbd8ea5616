package io.ferry.staging;

import io.ferry.model.ImageRef;

import java.nio.file.Path;
import java.util.Objects;

/** One image directory to push and the reference it is stored under. */
public record PushImage(Path dir, ImageRef ref) {
    public PushImage {
        Objects.requireNonNull(dir, "dir");
        Objects.requireNonNull(ref, "ref");
    }
}
