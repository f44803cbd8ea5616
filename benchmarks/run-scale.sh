#!/usr/bin/env bash
# Builds Ferry (reactor, offline-capable, nothing installed into ~/.m2) and runs the coordinator
# scale benchmark once per size: benchmarks/run-scale.sh [RANKS_PER_NODE NODES GENERATIONS] ...
#   benchmarks/run-scale.sh                    # 16 x 2048 (32,768 ranks), 8 generations
#   benchmarks/run-scale.sh 16 2048 8 256 4096 5   # then 256 x 4096 (1,048,576 ranks), 5 generations
# Environment: HEAP (default 6g), WORK (default a temp dir), MVN_FLAGS (e.g. -o), JAVA_OPTS.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
. benchmarks/classpath.sh
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(16 2048 8)
i=0
while [ $i -lt ${#args[@]} ]; do
  per=${args[$i]}; nodes=${args[$((i+1))]:-2048}; gens=8
  if [ $((i+2)) -lt ${#args[@]} ]; then gens=${args[$((i+2))]}; fi
  i=$((i+3))
  echo "== $nodes nodes x $per ranks, $gens generations; uptime: $(uptime)"
  work="${WORK:-$(mktemp -d -t ferry-scale.XXXXXX)}"
  java -Xmx${HEAP:-6g} -Xms${HEAP:-6g} -XX:+UseG1GC ${JAVA_OPTS:-} -cp "$cp" \
    io.ferry.benchmarks.ClusterScaleBenchmark "$per" "$nodes" "$gens" "$work"
  rm -rf "$work"
done
