#!/usr/bin/env bash
# Builds Ferry (reactor, nothing installed into ~/.m2) and measures what each chunking (fixed
# sizes, FastCDC averages) makes the next generation of a seeded image cost after scattered
# rewrites and after shifted bytes: benchmarks/run-chunking.sh [SIZE] [WORK_DIR] (default 256MiB).
# Environment: MVN_FLAGS (e.g. -o), JAVA_OPTS. Needs about 4 x SIZE of heap (set by HEAP, default 2g).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
. benchmarks/classpath.sh
echo "uptime: $(uptime)"
exec java -Xmx${HEAP:-2g} ${JAVA_OPTS:-} -Djna.tmpdir="$here/benchmarks/target/jna" -cp "$cp" \
  io.ferry.benchmarks.ChunkingBenchmark "${1:-256MiB}" "${2:-$(mktemp -d -t ferry-chunking.XXXXXX)}"
