#!/usr/bin/env bash
# Times a coordinator's start, from its broker's start to serving (live: caught up with the log),
# over the simulated history of a long job: benchmarks/run-coordinator-start.sh [NODES] [HOURS]
# [INTERVAL_MINUTES] (default 1000 nodes, 24 hours, a checkpoint every 10 minutes: about 2.5
# minutes and 3 GB of temp disk on a 2-core VM). Each layout runs in its own JVM over its own
# embedded broker: `events` (heartbeats in ferry.events, as Ferry kept them before
# ferry.heartbeats: the coordinator replays them all), `heartbeats` (in ferry.heartbeats, the
# last hour only, as its retention leaves it) and `live` (the staging progress there too, as
# agents send it now; LAYOUTS="heartbeats live" runs only those two). After the `live` layout, two
# restarts in new JVMs load the snapshot of the folded state its start left: with nothing written
# after it, its broker started cold (the JVM's first, as a service after a crash) and warm (the JVM
# started it once before, as for the first measured start), then warm with TAIL generations after
# it (default: about 200,000 events, the snapshot interval: the longest replay a restart meets).
# The history is HOURS long,
# not 30 days: a replay is
# linear in the events it folds, so each run also prints the start projected to 30 days (the
# events x 30 days / HOURS, folded at the rate measured, plus the start on an empty log).
# Environment: HEAP (default 4g), WORK (default a temp dir), MVN_FLAGS (e.g. -o), JAVA_OPTS.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
. benchmarks/classpath.sh
nodes=${1:-1000}; hours=${2:-24}; interval=${3:-10}
work="${WORK:-$(mktemp -d -t ferry-coord-start.XXXXXX)}"
trap 'rm -rf "$work"' EXIT
echo "uptime: $(uptime)"
for layout in ${LAYOUTS:-events heartbeats live}; do
  java -Xmx${HEAP:-4g} -XX:+UseG1GC ${JAVA_OPTS:-} -cp "$cp" \
    io.ferry.benchmarks.CoordinatorStartBenchmark "$layout" "$nodes" "$hours" "$interval" "$work"
  # Then the restarts that load the snapshot the measured start left, each in a new JVM: with nothing
  # after the snapshot, and with TAIL generations after it (by default about as many events as the
  # coordinator folds between two snapshots, 200,000: the longest replay a restart meets).
  if [ "$layout" = live ]; then
    for run in "0 cold" "0 warm" "${TAIL:-$(( 200000 / (2 * nodes + 2) ))} warm"; do
      set -- $run
      java -Xmx${HEAP:-4g} -XX:+UseG1GC ${JAVA_OPTS:-} -cp "$cp" \
        io.ferry.benchmarks.CoordinatorStartBenchmark restart "$layout" "$nodes" "$1" "$work" "$2"
    done
  fi
done
