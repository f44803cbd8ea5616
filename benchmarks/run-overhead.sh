#!/usr/bin/env bash
# What a one-node `ferry run` costs around its job: its start (JVM, embedded broker, coordinator,
# agent) and its stop, on a job that is `sleep 3` with no checkpoint. Each run prints its wall
# and CPU seconds and the seconds from the line "job finished" to the process's exit; then the
# medians. The tool a user would use instead is the job alone: `sleep 3` takes 3.0 s.
#
#   benchmarks/run-overhead.sh [RUNS]      (default 5; the launcher builds the distribution first)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
runs="${1:-5}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$here/bin/ferry" --version > /dev/null 2>&1 || true # the first call builds; not measured
walls=(); cpus=(); stops=()
for i in $(seq 1 "$runs"); do
  rm -rf "$work/home"
  start=$(date +%s.%N)
  /usr/bin/time -f "%e %U %S" -o "$work/time" "$here/bin/ferry" run --job overhead --ranks 1 --interval 0 \
      --home "$work/home" --http off -- sleep 3 2>&1 \
    | while IFS= read -r line; do
        case "$line" in *"job finished"*) date +%s.%N > "$work/finished" ;; esac
      done
  end=$(date +%s.%N)
  read -r wall user sys < "$work/time"
  stop=$(awk -v a="$end" -v b="$(cat "$work/finished")" 'BEGIN {print a - b}')
  cpu=$(awk -v a="$user" -v b="$sys" 'BEGIN {print a + b}')
  printf 'run %d: %.2f s wall, %.2f CPU s, %.2f s from "job finished" to exit\n' "$i" "$wall" "$cpu" "$stop"
  walls+=("$wall"); cpus+=("$cpu"); stops+=("$stop")
  rm -f "$work/finished"
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
printf 'median of %d: %.2f s wall for a 3.0 s job, %.2f CPU s, %.2f s to stop\n' "$runs" "$(median "${walls[@]}")" \
  "$(median "${cpus[@]}")" "$(median "${stops[@]}")"
