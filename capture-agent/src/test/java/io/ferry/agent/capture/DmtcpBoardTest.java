package io.ferry.agent.capture;

import io.ferry.agent.peer.PeerAuth;
import io.ferry.agent.peer.PeerClient;
import io.ferry.agent.peer.PeerServer;
import io.ferry.model.PeerAddresses;
import io.ferry.staging.Staging;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The lead's board of a DMTCP computation across nodes, asked as the other agents ask it: over a
 * real peer server requiring the agents' secret, by real peer clients.
 */
class DmtcpBoardTest {
    @TempDir
    Path tmp;

    @Test
    void theOtherNodesLearnThisStartsCoordinatorAndEachCheckpointsEndAndNothingOfAnotherStart() throws Exception {
        Path f = tmp.resolve("secret");
        Files.writeString(f, "0123456789abcdef-the-agents-secret\n");
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-------"));
        PeerAuth auth = PeerAuth.fromFile(f);
        DmtcpBoard board = new DmtcpBoard();
        try (PeerServer server = new PeerServer(new InetSocketAddress("127.0.0.1", 0),
                Staging.localCache(tmp.resolve("cache")), auth).answering(board::answer)) {
            PeerAddresses.Peer lead = PeerAddresses.parse("n0=" + server.address()).get(0);
            assertEquals(Optional.empty(), PeerClient.ask(lead, "COORD", "job", 100, auth), "nothing led yet");
            assertThrows(IOException.class, () -> PeerClient.ask(lead, "COORD", "job", 100, PeerAuth.NONE),
                    "not without the secret");

            board.leading("job", 100, "41234");
            assertEquals(Optional.of("41234"), PeerClient.ask(lead, "COORD", "job", 100, auth));
            assertEquals(Optional.empty(), PeerClient.ask(lead, "COORD", "job", 99, auth),
                    "an earlier start's is not named");
            assertEquals(Optional.empty(), PeerClient.ask(lead, "COORD", "other", 100, auth),
                    "another job's is not named");

            assertEquals(Optional.empty(), PeerClient.ask(lead, "CKPT", "job", 3, auth), "generation 3 not taken yet");
            board.checkpointed("job", 3, "OK 640");
            assertEquals(Optional.of("640"), PeerClient.ask(lead, "CKPT", "job", 3, auth));
            board.checkpointed("job", 4, "ERR dmtcp_command --bcheckpoint failed\n(exit 99)");
            IOException failed = assertThrows(IOException.class, () -> PeerClient.ask(lead, "CKPT", "job", 4, auth));
            assertTrue(failed.getMessage().contains("n0: dmtcp_command --bcheckpoint failed (exit 99)"),
                    failed.getMessage());

            board.leading("job", 101, "41300"); // the next start: the last one's outcomes go with it
            assertEquals(Optional.empty(), PeerClient.ask(lead, "CKPT", "job", 3, auth));
            assertEquals(Optional.empty(), PeerClient.ask(lead, "COORD", "job", 100, auth));
            assertEquals(Optional.of("41300"), PeerClient.ask(lead, "COORD", "job", 101, auth));
            board.forget("job");
            assertEquals(Optional.empty(), PeerClient.ask(lead, "COORD", "job", 101, auth), "its ranks stopped");
        }
    }

    @Test
    void aStartIsSupersededOnceANewerLaunchOfItsJobIsReceived() {
        DmtcpBoard board = new DmtcpBoard();
        assertFalse(board.superseded("job", 100));
        board.launched("job", 100);
        assertFalse(board.superseded("job", 100), "its own launch");
        board.launched("job", 101);
        assertTrue(board.superseded("job", 100));
        board.launched("job", 100); // delivered late: the newest stays
        assertTrue(board.superseded("job", 100));
        assertFalse(board.superseded("other", 100));
        board.release("job");
        assertFalse(board.superseded("job", 100), "a job that left the node is forgotten");
    }

    @Test
    void onlyEveryOutcomeOfTheLastSixteenGenerationsIsKept() {
        DmtcpBoard board = new DmtcpBoard();
        board.leading("job", 1, "4000");
        for (long g = 0; g < 20; g++) {
            board.checkpointed("job", g, "OK " + g);
        }
        assertEquals("NO", board.answer("CKPT", "job", 3));
        assertEquals("OK 4", board.answer("CKPT", "job", 4));
        assertEquals("OK 19", board.answer("CKPT", "job", 19));
    }
}
