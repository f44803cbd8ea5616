package io.ferry.model;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SizesTest {
    @Test
    void exascaleSizesParseInDecimalAndBinaryUpToWhatALongHolds() {
        assertEquals(1_000_000_000_000_000_000L, Sizes.parse("1EB"));
        assertEquals(1L << 60, Sizes.parse("1EiB"));
        assertEquals(1L << 60, Sizes.parse("1E"));
        assertEquals(2_500_000_000_000_000_000L, Sizes.parse("2.5 eb"));
        assertEquals(100_000_000_000_000_000L, Sizes.parse("100PB"));
        assertEquals(4096, Sizes.parse("4K"));
        IllegalArgumentException big = assertThrows(IllegalArgumentException.class, () -> Sizes.parse("10EB"));
        assertTrue(big.getMessage().contains("9.2 EB"), big.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Sizes.parse("8EiB"), "2^63 does not fit");
        assertThrows(IllegalArgumentException.class, () -> Sizes.parse("1ZB"));
        assertEquals("2.0 EiB", Sizes.format(1L << 61));
    }
}
