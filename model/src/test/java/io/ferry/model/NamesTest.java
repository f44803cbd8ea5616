package io.ferry.model;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class NamesTest {
    @ParameterizedTest
    @ValueSource(strings = {"../etc", "..", ".", "", "a/b", "a b", "job\n", "j\u0000b", "é", ".foo", "_tmp", "-x"})
    void unsafeJobIdsAreRefusedNamingTheValue(String job) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Names.requireJob(job));
        assertTrue(e.getMessage().startsWith("unsafe job id"), e.getMessage());
    }

    @Test
    void longJobIdsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> Names.requireJob("x".repeat(129)));
        assertEquals("x".repeat(128), Names.requireJob("x".repeat(128)));
    }

    @Test
    void controlCharactersAreShownEscaped() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Names.requireJob("a\u001bb"));
        assertTrue(e.getMessage().contains("a\\x1bb"), e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"../x", "a/../b", "/abs", "a//b", "a/./b", "a/", "a\\b", "a\tb"})
    void unsafeImagePathsAreRefused(String path) {
        assertThrows(IllegalArgumentException.class, () -> Names.requireRelativePath(path));
    }

    @Test
    void imageRefRefusesNegativeNumbers() {
        assertThrows(IllegalArgumentException.class, () -> new ImageRef("j", -1, 0));
        assertThrows(IllegalArgumentException.class, () -> new ImageRef("j", 0, -1));
        assertEquals("j.1_x/3/7", new ImageRef("j.1_x", 3, 7).toString());
    }
}
