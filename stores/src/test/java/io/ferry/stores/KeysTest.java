package io.ferry.stores;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class KeysTest {
    @Test
    void keysOfSafePartsPassUnchanged() {
        for (String k : new String[]{"a", "ferry/v2/packs/c2/c272f9d853b91c45", "jobs/my-job_1/0/0.manifest",
                "A.b-C_d/9", "x..y"}) {
            assertEquals(k, Keys.require(k));
        }
    }

    @Test
    void everyUnsafeKeyIsRefusedNamingItsBadPart() {
        String[][] cases = {
                {"../x", ".."}, {"a/../b", ".."}, {"/abs", ""}, {"a//b", ""}, {"a/", ""}, {".hidden", ".hidden"},
                {"a/.tmp", ".tmp"}, {"a b", "a b"}, {"caf\u00e9", "caf\u00e9"}, {"a/b\\c", "b\\c"}, {"a/b:c", "b:c"},
                {"a/b\u0000", "b\u0000"}};
        for (String[] c : cases) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Keys.require(c[0]), c[0]);
            assertTrue(e.getMessage().contains("bad part '" + c[1] + "'"), e.getMessage());
        }
        for (String k : new String[]{null, "", "a".repeat(1025)}) {
            assertThrows(IllegalArgumentException.class, () -> Keys.require(k));
        }
    }
}
