package io.ferry.coordinator;

import org.junit.jupiter.api.Test;

import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An error while handling one job's event sets that job aside, and the others go on. The error is
 * a real one, provoked: a recursion without end overflows the stack, as a pathological fold would.
 */
class QuarantineTest {
    private static int deeper(int n) {
        return deeper(n + 1) + 1;
    }

    @Test
    void aStackOverflowSetsItsJobAsideAndTheOthersGoOn() {
        Quarantine q = new Quarantine();
        AtomicInteger handled = new AtomicInteger();
        assertFalse(q.run("bad", () -> "event at offset 7", () -> deeper(0)));
        assertTrue(q.holds("bad"));
        assertTrue(q.run("good", () -> "event at offset 8", handled::incrementAndGet), "another job goes on");
        assertFalse(q.run("bad", () -> "event at offset 9", handled::incrementAndGet),
                "nothing more for the job set aside");
        assertEquals(1, handled.get());
        assertEquals(Set.of("bad"), q.all());
    }

    @Test
    void programmingErrorsOfOtherKindsAreNotSwallowed() {
        Quarantine q = new Quarantine();
        assertThrows(IllegalStateException.class, () -> q.run("j", () -> "x", () -> {
            throw new IllegalStateException("a bug: the caller's guard reports it");
        }));
        assertThrows(InternalError.class, () -> q.run("j", () -> "x", () -> {
            throw new InternalError("the JVM itself");
        }));
        assertFalse(q.holds("j"));
    }
}
