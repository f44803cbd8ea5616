package io.ferry.cli;

import io.ferry.model.Event;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** What `ferry run` prints of a node's failed restore (whether the images or the launch failed), and of placements. */
class EventPrinterTest {
    private static String printed(Event e) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
            new EventPrinter(out, System.nanoTime(), Optional::empty).accept(e);
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void aFailedRestoreSaysWhetherTheImagesOrTheLaunchFailed() {
        String launch = printed(new Event.RestoreFailed("j", 4, "n1", "Cannot run program", false, false, true));
        assertTrue(launch.contains("node n1 cannot launch the ranks of generation 4: Cannot run program (nothing"
                + " against the snapshot"), launch);
        String restore = printed(new Event.RestoreFailed("j", 4, "n1", "digest mismatch"));
        assertTrue(restore.contains("node n1 cannot restore generation 4: digest mismatch\n"), restore);
        String start = printed(new Event.RestoreFailed("j", -1, "n1", "no such program", false, false, true));
        assertTrue(start.contains("node n1 cannot start the job: no such program\n"), start);
    }

    @Test
    void aStartsPlacementIsALaunchAndALostNodesIsAMove() {
        String start = printed(new Event.JobPlaced("j", "block:n1,n2", Event.JobPlaced.START));
        assertTrue(start.contains("ranks launched on block:n1,n2\n"), start);
        String moved = printed(new Event.JobPlaced("j", "map:0-1:n1,2-3:n3", "node n2 lost"));
        assertTrue(moved.contains("ranks placed anew: node n2 lost\n"), moved);
    }
}
