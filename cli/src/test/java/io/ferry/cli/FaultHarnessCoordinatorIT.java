package io.ferry.cli;

import static io.ferry.cli.FaultHarness.Fault.COORDINATOR_AT_MARKER;
import static io.ferry.cli.FaultHarness.Fault.COORDINATOR_AT_REQUEST;
import static io.ferry.cli.FaultHarness.Fault.COORDINATOR_BEFORE_MARKER;
import static io.ferry.cli.FaultHarness.Fault.COORDINATOR_KILLED;

/**
 * The fault harness's faults on the coordinator (and the broker it embeds): killed, or halted at each crash point
 * of a checkpoint's commit.
 */
class FaultHarnessCoordinatorIT extends FaultHarness {
    FaultHarnessCoordinatorIT() {
        super(COORDINATOR_KILLED, COORDINATOR_BEFORE_MARKER, COORDINATOR_AT_MARKER, COORDINATOR_AT_REQUEST);
    }
}
