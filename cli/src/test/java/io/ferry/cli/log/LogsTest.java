package io.ferry.cli.log;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.LoggingEvent;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LogsTest {
    @Test
    void aLevelIsOneOfSixNamesInAnyCaseAndABadOneIsRefusedNamingTheKey() {
        assertEquals(Level.DEBUG, Logs.level("log.level.io.ferry", "debug"));
        assertEquals(Level.WARN, Logs.level("log.level.org.apache.kafka", " WARN "));
        assertEquals(Level.OFF, Logs.level("log.level.root", "off"));
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> Logs.level("log.level.io.ferry.agent", "verbose"));
        assertEquals("configuration key 'log.level.io.ferry.agent': invalid value 'verbose': use one of trace, debug,"
                + " info, warn, error, off", bad.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Logs.level("log.level.io.ferry", ""));
    }

    @Test
    void theKeyNamesALoggerOrPackageAndRootIsTheRootLogger() {
        assertEquals("io.ferry.agent.NodeAgent", Logs.loggerOf("log.level.io.ferry.agent.NodeAgent"));
        assertEquals("ROOT", Logs.loggerOf("log.level.root"));
        for (String bad : new String[]{"log.level.", "log.level.io..ferry", "log.level.io.ferry.", "log.level.a b",
                "log.level.1x"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Logs.loggerOf(bad), bad);
            assertTrue(e.getMessage().startsWith("configuration key '" + bad + "'"), e.getMessage());
        }
    }

    @Test
    void aFlagWithoutALoggerSetsFerrysPackages() {
        assertEquals(Map.entry("log.level.io.ferry", "debug"), Logs.fromFlag("debug"));
        assertEquals(Map.entry("log.level.org.apache.kafka", "info"), Logs.fromFlag("org.apache.kafka=info"));
        assertThrows(IllegalArgumentException.class, () -> Logs.fromFlag("org.apache.kafka=chatty"));
    }

    @Test
    void aVariableNamesAPackageItsUnderscoresReadAsDots() {
        assertEquals(Optional.of("log.level.org.apache.kafka"), Logs.keyOfVariable("FERRY_LOG_LEVEL_ORG_APACHE_KAFKA"));
        assertEquals(Optional.of("log.level.root"), Logs.keyOfVariable("FERRY_LOG_LEVEL_ROOT"));
        assertEquals(Optional.empty(), Logs.keyOfVariable("FERRY_LOG_LEVEL_"));
        assertEquals(Optional.empty(), Logs.keyOfVariable("FERRY_STAGING_ZSTD_LEVEL"));
    }

    @Test
    void applySetsLevelsOverTheFilesAndTheNextApplyPutsTheFilesBack() {
        // The levels cli's logback.xml sets are checked by LoggingIT, in a child process of the packaged jars.
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        Level ferry = context.getLogger("io.ferry").getLevel();
        context.getLogger("org.apache.kafka").setLevel(Level.WARN);
        try {
            Logs.apply(Map.of("log.level.io.ferry", "debug", "log.level.org.apache.kafka.clients", "info"));
            assertEquals(Level.DEBUG, context.getLogger("io.ferry").getLevel());
            assertTrue(context.getLogger("io.ferry.agent.X").isDebugEnabled());
            assertTrue(context.getLogger("org.apache.kafka.clients.NetworkClient").isInfoEnabled());
            assertTrue(!context.getLogger("org.apache.kafka.server.X").isInfoEnabled(),
                    "the rest of Kafka stays at WARN");
            assertThrows(IllegalArgumentException.class, () -> Logs.apply(Map.of("log.level.io.ferry", "loud")));
            assertEquals(Level.DEBUG, context.getLogger("io.ferry").getLevel(), "a bad key sets nothing");
        } finally {
            Logs.apply(Map.of());
        }
        assertEquals(ferry, context.getLogger("io.ferry").getLevel(), "the file's level again");
        assertEquals(null, context.getLogger("org.apache.kafka.clients").getLevel(), "inherits again");
    }

    @Test
    void eventFieldsPrintTheMdcsJobGenerationRankAndNodeInOrderEachOnlyWhenSet() {
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        LoggingEvent e = new LoggingEvent();
        e.setLoggerContext(context);
        e.setMDCPropertyMap(Map.of("node", "n1", "job", "sim", "rank", "3", "other", "x"));
        assertEquals(" job=sim rank=3 node=n1", new EventFields().convert(e));
        LoggingEvent none = new LoggingEvent();
        none.setLoggerContext(context);
        none.setMDCPropertyMap(Map.of());
        assertEquals("", new EventFields().convert(none));
    }
}
