#!/usr/bin/env bash
# Forecast accuracy on a job whose snapshots write far less than their raw size: 2 bash ranks
# (signal mode), each with an image of SIZE MiB, half random and half zeros; every checkpoint
# copies that base image and rewrites 100 MiB of it at a different place. The first snapshot
# stores the random half (what is new), every later one only the ~100 MiB per rank that
# changed. Then `ferry plan --accuracy` sets each forecast beside what happened.
#   benchmarks/run-accuracy-dedup.sh [CHECKPOINTS] [WORK_DIR] [SIZE_MIB_PER_RANK]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
n="${1:-13}"
work="${2:-$here/bench-work/accuracy-dedup}"
size="${3:-1024}"
rm -rf "$work"
mkdir -p "$work"
home="$work/home"
job=dedup2
stop="$work/stop"
. "$here/benchmarks/accuracy-common.sh"
# Rank: builds its base image once, then on SIGUSR2 copies it into generation g's directory and
# rewrites 100 MiB at offset (g x 37 mod (size/100 - 1)) x 100 MiB.
rank='base="'"$work"'/base-$FERRY_RANK"; half=$(('"$size"' / 2));'
rank+=' { head -c ${half}M /dev/urandom; head -c ${half}M /dev/zero; } > "$base";'
rank+=" trap 'g=\$(cat \"\$FERRY_CKPT_DIR/REQUEST\"); d=\"\$FERRY_CKPT_DIR/\$g\"; cp \"\$base\" \"\$d/memory\";"
rank+=" dd if=/dev/urandom of=\"\$d/memory\" bs=1M count=100 seek=\$(( (g * 37) % ($size / 100 - 1) * 100 )) conv=notrunc status=none;"
rank+=" : > \"\$d/DONE\"' USR2;"
rank+=" while [ ! -f '$stop' ]; do sleep 0.2; done"
"$here/bin/ferry" run --job "$job" --ranks 2 --interval 15s --home "$home" -- bash -c "$rank" > "$work/$job.log" 2>&1 &
finish_job "$job" $! "$n" "$stop"
"$here/bin/ferry" status "$job" --home "$home" | head -40
"$here/bin/ferry" plan --accuracy "$job" --home "$home"
