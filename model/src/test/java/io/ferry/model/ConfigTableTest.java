package io.ferry.model;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ConfigTableTest {
    private static final ConfigKey<Integer> LEVEL = ConfigKey.intKey("x.level", "doc", 1, 0, 9);
    private static final ConfigKey<Long> SIZE = ConfigKey.sizeKey("x.size", "doc", "4MiB", 1, 1L << 30);
    private static final ConfigTable TABLE = new ConfigTable(List.of(LEVEL, SIZE));

    @Test
    void defaultsApplyAndValuesParse() {
        assertEquals(1, TABLE.resolve(Map.of()).get(LEVEL));
        assertEquals(4L << 20, TABLE.resolve(Map.of()).get(SIZE));
        assertEquals(8_000_000L, TABLE.resolve(Map.of("x.size", "8MB")).get(SIZE));
    }

    @Test
    void unknownKeyIsNamed() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TABLE.resolve(Map.of("x.levle", "3")));
        assertTrue(e.getMessage().contains("x.levle"), e.getMessage());
    }

    @Test
    void badValueNamesKeyAndValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TABLE.resolve(Map.of("x.level", "12")).get(LEVEL));
        assertTrue(e.getMessage().contains("x.level") && e.getMessage().contains("12"), e.getMessage());
    }

    @Test
    void sizesParseBinaryAndDecimal() {
        assertEquals(65536, Sizes.parse("65536"));
        assertEquals(4096, Sizes.parse("4K"));
        assertEquals(4096, Sizes.parse("4KiB"));
        assertEquals(4000, Sizes.parse("4KB"));
        assertEquals(1L << 40, Sizes.parse("1TiB"));
        assertThrows(IllegalArgumentException.class, () -> Sizes.parse("four"));
        assertEquals("1.5 GiB", Sizes.format(3L << 29));
    }
}
