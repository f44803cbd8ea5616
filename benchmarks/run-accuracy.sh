#!/usr/bin/env bash
# Forecast accuracy on this machine: two real jobs (2 and 4 ranks, bash ranks in signal mode)
# checkpoint every 6 s with images of a different size each time (32..256 MiB per snapshot,
# incompressible), then `ferry plan --accuracy` sets every forecast beside what happened.
#   benchmarks/run-accuracy.sh [CHECKPOINTS_PER_JOB] [WORK_DIR]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
n="${1:-13}"
work="${2:-$here/bench-work/accuracy}"
rm -rf "$work"
mkdir -p "$work"
home="$work/home"
established() {
  "$here/bin/ferry" status "$1" --json --home "$home" 2>/dev/null \
    | python3 -c 'import json,sys; print(json.load(sys.stdin).get("newestEstablished", -1))' 2>/dev/null || echo -1
}
for ranks in 2 4; do
  job="acc$ranks"
  stop="$work/stop-$job"
  # Generation g writes (8 + 37 g mod 57) x 4 MiB in all, split over the ranks.
  rank="trap 'g=\$(cat \"\$FERRY_CKPT_DIR/REQUEST\"); d=\"\$FERRY_CKPT_DIR/\$g\";"
  rank+=" head -c \$(( (8 + (g * 37) % 57) * 4 / $ranks ))M /dev/urandom > \"\$d/memory\"; : > \"\$d/DONE\"' USR2;"
  rank+=" while [ ! -f '$stop' ]; do sleep 0.2; done"
  "$here/bin/ferry" run --job "$job" --ranks "$ranks" --interval 6s --home "$home" -- bash -c "$rank" \
    > "$work/$job.log" 2>&1 &
  pid=$!
  while [ "$(established "$job")" -lt $((n - 1)) ]; do
    if ! kill -0 "$pid" 2>/dev/null; then echo "ferry run of $job ended early:"; cat "$work/$job.log"; exit 1; fi
    sleep 5
  done
  touch "$stop"
  wait "$pid"
  "$here/bin/ferry" plan --accuracy "$job" --home "$home"
  echo
done
