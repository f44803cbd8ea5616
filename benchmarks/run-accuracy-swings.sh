#!/usr/bin/env bash
# Forecast accuracy on a job whose data changes: 6 bash ranks (signal mode) of 16, 32, 64 and 128 MiB
# (16 x 2^(rank mod 4)), a checkpoint every INTERVAL; each generation's images are either all new
# random bytes (generations g with g mod 3 = 0, and g mod 5 = 2) or a copy of the rank's previous image,
# so what a snapshot writes swings between all of it and nothing. Then `ferry plan --accuracy` sets
# each forecast (at capture, and again at 25%, 50% and 75% of the bytes read for staging) beside what
# happened.
#   benchmarks/run-accuracy-swings.sh [CHECKPOINTS] [WORK_DIR] [INTERVAL]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
n="${1:-16}"
work="${2:-$here/bench-work/accuracy-swings}"
interval="${3:-6s}"
rm -rf "$work"
mkdir -p "$work"
home="$work/home"
job=swings
stop="$work/stop"
. "$here/benchmarks/accuracy-common.sh"
# Rank: on SIGUSR2, generation g's image is new random bytes or a copy of its previous one.
rank='mib=$(( 16 << (FERRY_RANK % 4) )); prev="'"$work"'/prev-$FERRY_RANK";'
rank+=" trap 'g=\$(cat \"\$FERRY_CKPT_DIR/REQUEST\"); d=\"\$FERRY_CKPT_DIR/\$g\";"
rank+=" if [ ! -f \"\$prev\" ] || [ \$((g % 3)) = 0 ] || [ \$((g % 5)) = 2 ]; then head -c \${mib}M /dev/urandom > \"\$prev\"; fi;"
rank+=" cp \"\$prev\" \"\$d/memory\"; : > \"\$d/DONE\"' USR2;"
rank+=" while [ ! -f '$stop' ]; do sleep 0.2; done"
"$here/bin/ferry" run --job "$job" --ranks 6 --interval "$interval" --home "$home" \
  --log-level io.ferry.agent.CaptureSample=DEBUG -- bash -c "$rank" > "$work/$job.log" 2>&1 &
finish_job "$job" $! "$n" "$stop"
"$here/bin/ferry" plan --accuracy "$job" --home "$home"
