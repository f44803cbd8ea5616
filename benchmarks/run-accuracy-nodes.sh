#!/usr/bin/env bash
# Forecast accuracy on a multi-node job whose data changes: a `ferry coordinator` (its embedded
# broker on loopback) and three `ferry agent`s n0, n1, n2, each a process with its own home on
# this machine (not network namespaces: the agents share the machine's cores and disk, as the
# nodes of a job share a store); 6 bash ranks, 2 per node, of 16, 32, 64, 128, 16 and 32 MiB
# (node n1 holds 192 MiB, the others 48: the job waits for n1), a checkpoint every INTERVAL; each
# generation's images are all new random bytes or a copy of the rank's previous one, as in
# run-accuracy-swings.sh. Then `ferry plan --accuracy` sets each forecast (at capture, and again
# at 25%, 50% and 75% of the bytes read for staging) beside what happened.
#   benchmarks/run-accuracy-nodes.sh [CHECKPOINTS] [WORK_DIR] [INTERVAL]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
n="${1:-16}"
work="${2:-$here/bench-work/accuracy-nodes}"
interval="${3:-6s}"
rm -rf "$work"
mkdir -p "$work"
job=nodes3
stop="$work/stop"
export FERRY_DAEMON=off # the long-running commands each in a JVM of their own
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
kafka="127.0.0.1:$port"
pids=()
cleanup() { touch "$stop"; for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
"$here/bin/ferry" coordinator --home "$work/coordinator" --listen "$kafka" --http off > "$work/coordinator.log" 2>&1 &
pids+=($!)
until grep -q "serving jobs" "$work/coordinator.log"; do sleep 0.5; done
for node in n0 n1 n2; do
  "$here/bin/ferry" agent --kafka "$kafka" --node "$node" --home "$work/$node" --heartbeat 1s --peer-listen off \
    > "$work/$node.log" 2>&1 &
  pids+=($!)
done
for node in n0 n1 n2; do until grep -q "ferry agent $node" "$work/$node.log"; do sleep 0.5; done; done
rank='mib=$(( 16 << (FERRY_RANK % 4) )); prev="'"$work"'/prev-$FERRY_RANK";'
rank+=" trap 'g=\$(cat \"\$FERRY_CKPT_DIR/REQUEST\"); d=\"\$FERRY_CKPT_DIR/\$g\";"
rank+=" if [ ! -f \"\$prev\" ] || [ \$((g % 3)) = 0 ] || [ \$((g % 5)) = 2 ]; then head -c \${mib}M /dev/urandom > \"\$prev\"; fi;"
rank+=" cp \"\$prev\" \"\$d/memory\"; : > \"\$d/DONE\"' USR2;"
rank+=" while [ ! -f '$stop' ]; do sleep 0.2; done"
"$here/bin/ferry" run --kafka "$kafka" --job "$job" --ranks 6 --nodes n0,n1,n2 --interval "$interval" \
  --store "$work/store" -- bash -c "$rank" > "$work/$job.log" 2>&1 &
run=$!
newest() {
  "$here/bin/ferry" status "$job" --json --kafka "$kafka" 2>/dev/null \
    | python3 -c 'import json,sys; print(json.load(sys.stdin).get("newestEstablished", -1))' 2>/dev/null || echo -1
}
while [ "$(newest)" -lt $((n - 1)) ]; do
  if ! kill -0 "$run" 2>/dev/null; then echo "ferry run of $job ended early:"; cat "$work/$job.log"; exit 1; fi
  sleep 5
done
touch "$stop"
wait "$run"
"$here/bin/ferry" plan --accuracy "$job" --kafka "$kafka"
