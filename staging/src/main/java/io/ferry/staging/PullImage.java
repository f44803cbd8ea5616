package io.ferry.staging;

import io.ferry.model.ImageRef;

import java.nio.file.Path;
import java.util.Objects;

/** One image to pull and the directory (absent or empty) it is restored into. */
public record PullImage(ImageRef ref, Path dest) {
    public PullImage {
        Objects.requireNonNull(ref, "ref");
        Objects.requireNonNull(dest, "dest");
    }
}
