package io.ferry.cli;

import java.util.Locale;
import java.util.Map;

/** What the fault harness counts per kind of fault, and the Markdown table it prints of it. */
final class FaultTable {
    private FaultTable() {
    }

    /** What happened in the runs of one kind of fault. */
    static final class Tally {
        int runs;
        int injected;
        int recoveries;
        int established;
        /** Of those, the ones established after the fault: checkpointing resumed. */
        int afterFault;
        int lost;
        int wrong;
        int hangs;
        /** Damage injected into a cached or stored object, and how often it was caught. */
        int rotted;
        int rotCaught;
    }

    static String of(Map<FaultHarness.Fault, Tally> tallies) {
        StringBuilder b = new StringBuilder("\n| fault | runs | injected | recoveries | snapshots established"
                + " | of them after the fault | snapshots lost | wrong results | hangs | damage caught |\n"
                + "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        Tally all = new Tally();
        for (var e : tallies.entrySet()) {
            Tally t = e.getValue();
            b.append(row(e.getKey().name().toLowerCase(Locale.ROOT).replace('_', ' '), t));
            all.runs += t.runs;
            all.injected += t.injected;
            all.recoveries += t.recoveries;
            all.established += t.established;
            all.afterFault += t.afterFault;
            all.lost += t.lost;
            all.wrong += t.wrong;
            all.hangs += t.hangs;
            all.rotted += t.rotted;
            all.rotCaught += t.rotCaught;
        }
        return b.append(row("**all**", all)).toString();
    }

    private static String row(String name, Tally t) {
        return String.format(Locale.ROOT, "| %s | %d | %d | %d | %d | %d | %d | %d | %d | %s |%n", name, t.runs,
                t.injected, t.recoveries, t.established, t.afterFault, t.lost, t.wrong, t.hangs,
                t.rotted == 0 ? "" : t.rotCaught + " of " + t.rotted);
    }
}
