#!/usr/bin/env bash
# Builds Ferry and pushes RANKS seeded images (one seed per rank: the same machine code, different
# data) through one pipeline, as one node's agent pushes its ranks: together (shared packs), one after another,
# together without lookups, and zstd on each file; prints seconds, bytes stored and pack objects: benchmarks/run-crossrank.sh [SIZE_PER_RANK] [RANKS] [WORK_DIR]
# (default 256MiB 4). Environment: MVN_FLAGS (e.g. -o), JAVA_OPTS.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
. benchmarks/classpath.sh
exec java -Xmx2g ${JAVA_OPTS:-} -Djna.tmpdir="$here/benchmarks/target/jna" -cp "$cp" \
  io.ferry.benchmarks.CrossRankBenchmark "${1:-256MiB}" "${2:-4}" "${3:-$here/bench-crossrank}"
