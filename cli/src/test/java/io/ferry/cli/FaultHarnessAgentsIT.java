package io.ferry.cli;

import static io.ferry.cli.FaultHarness.Fault.AGENT_AT_CAPTURE;
import static io.ferry.cli.FaultHarness.Fault.AGENT_AT_MANIFEST;
import static io.ferry.cli.FaultHarness.Fault.AGENT_AT_PACK;
import static io.ferry.cli.FaultHarness.Fault.AGENT_KILLED;

/** The fault harness's faults on a node agent: killed, or halted at each crash point of its checkpoint path. */
class FaultHarnessAgentsIT extends FaultHarness {
    FaultHarnessAgentsIT() {
        super(AGENT_KILLED, AGENT_AT_CAPTURE, AGENT_AT_PACK, AGENT_AT_MANIFEST);
    }
}
