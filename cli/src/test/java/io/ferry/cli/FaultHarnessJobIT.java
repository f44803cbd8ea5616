package io.ferry.cli;

import static io.ferry.cli.FaultHarness.Fault.BROKER_KILLED;
import static io.ferry.cli.FaultHarness.Fault.CACHE_ROT;
import static io.ferry.cli.FaultHarness.Fault.ONE_NODE_RUN_KILLED;
import static io.ferry.cli.FaultHarness.Fault.RANK_KILLED;
import static io.ferry.cli.FaultHarness.Fault.STORE_ROT;

/**
 * The fault harness's faults around a job: a rank killed, a one-node {@code ferry run} killed whole, a cached image or
 * a stored pack damaged, and the site's separate Kafka broker killed.
 */
class FaultHarnessJobIT extends FaultHarness {
    FaultHarnessJobIT() {
        super(RANK_KILLED, ONE_NODE_RUN_KILLED, CACHE_ROT, STORE_ROT, BROKER_KILLED);
    }
}
