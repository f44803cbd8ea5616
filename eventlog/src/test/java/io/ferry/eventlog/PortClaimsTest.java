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

    /**
     * A port the broker was told to listen on is free until it binds it, so the kernel may draw it for
     * another listener: it is passed over. (The kernel's draws are a sequence chosen here: that one
     * draw repeats the told port cannot be made to happen for real.)
     */
    @Test
    void aPortToAvoidIsPassedOverWhenTheKernelDrawsIt() throws Exception {
        int told;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            told = s.getLocalPort();
        }
        int other = told == 65535 ? told - 1 : told + 1;
        int[] draws = {told, told, other};
        int[] next = {0};
        try (PortClaims claims = new PortClaims(() -> draws[next[0]++])) {
            claims.avoid(told);
            assertEquals(other, claims.claim());
            assertEquals(3, next[0], "the told port drawn twice and passed over both times");
        }
    }
}
