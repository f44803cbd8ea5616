#!/usr/bin/env bash
# Builds Ferry (reactor, nothing installed into ~/.m2) and pushes three generations of a seeded
# image through the real pipeline in each layout (chunks, packs): the first, one with 5% rewritten
# in scattered runs, one with 100 bytes inserted near the start of every file; prints what each
# wrote and the objects it added: benchmarks/run-incremental.sh [SIZE] [WORK_DIR] (default 1GiB).
# Environment: MVN_FLAGS (e.g. -o), JAVA_OPTS. Needs about 3 x SIZE of heap (HEAP, default 4g) and 8 x SIZE of disk.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
. benchmarks/classpath.sh
echo "uptime: $(uptime)"
exec java -Xmx${HEAP:-4g} ${JAVA_OPTS:-} -Djna.tmpdir="$here/benchmarks/target/jna" -cp "$cp" \
  io.ferry.benchmarks.IncrementalBenchmark "${1:-1GiB}" "${2:-$here/bench-incremental}"
