package io.ferry.coordinator;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * {@link Lease}: a coordinator that stalled decides nothing until it has settled, wherever in its
 * loop the stall fell. The stalls here are sleeps far longer than the lease; only "not held" is
 * asserted, which a slower machine cannot make false.
 */
class LeaseTest {
    private static final Duration LEASE = Duration.ofMillis(20);
    private static final Duration SETTLE = Duration.ofSeconds(30);

    @Test
    void aStallBetweenTwoPollsIsNoticedBeforeTheNextPromptPollCountsAsFresh() throws Exception {
        Lease lease = new Lease(LEASE, SETTLE);
        lease.polled(lease.polling(true));
        Thread.sleep(200); // stopped after its last poll, e.g. while publishing its state
        long start = lease.polling(true);
        lease.polled(start); // the poll itself may come back at once
        assertFalse(lease.held(), "a stall outside a poll must hold decisions back until settled");
        assertEquals(1, lease.stalls());
    }

    @Test
    void aLatePollAndAStaleReadingAreStallsAsBefore() throws Exception {
        Lease late = new Lease(LEASE, SETTLE);
        long start = late.polling(true);
        Thread.sleep(200); // stopped inside the poll
        late.polled(start);
        assertFalse(late.held());
        assertEquals(1, late.stalls());

        Lease stale = new Lease(LEASE, SETTLE);
        stale.polled(stale.polling(true));
        Thread.sleep(200); // stopped while handling what it read
        assertFalse(stale.held());
        assertEquals(1, stale.stalls());
    }

    @Test
    void whileStartingAPauseBeforeAPollIsNoStall() throws Exception {
        Lease lease = new Lease(LEASE, SETTLE);
        Thread.sleep(200); // joining the group, replaying: slow by nature
        lease.polledWhileStarting(lease.polling(false));
        assertEquals(0, lease.stalls());
    }
}
