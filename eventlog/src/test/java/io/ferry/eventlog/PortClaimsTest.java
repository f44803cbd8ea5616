package io.ferry.eventlog;

import io.ferry.model.OwnerOnly;
import org.junit.jupiter.api.Test;

import java.nio.channels.FileChannel;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Ports claimed for a broker's listeners: distinct, held by a lock another process cannot take, let go at close. */
class PortClaimsTest {
    @Test
    void claimedPortsAreDistinctLockedWhileHeldAndReleasedAtClose() throws Exception {
        Path dir = OwnerOnly.privateRuntimeDir(Map.of()).resolve("ports");
        Set<Integer> ports = new HashSet<>();
        try (PortClaims claims = new PortClaims()) {
            for (int i = 0; i < 40; i++) {
                assertTrue(ports.add(claims.claim()), "a port claimed twice: " + ports);
            }
            for (int p : ports) {
                assertTrue(Files.exists(dir.resolve(p + ".lock")), "the claim of " + p + " is a file");
            }
            // The claim's lock is held: a broker starting in this JVM is told so, another process finds it taken.
            int one = ports.iterator().next();
            try (FileChannel ch = FileChannel.open(dir.resolve(one + ".lock"), StandardOpenOption.WRITE)) {
                assertThrows(OverlappingFileLockException.class, ch::tryLock);
            }
        }
        for (int p : ports) {
            assertFalse(Files.exists(dir.resolve(p + ".lock")), "released: " + p);
        }
        assertEquals(40, ports.size());
    }
}
