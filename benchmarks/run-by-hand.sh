#!/usr/bin/env bash
# Builds Ferry (reactor, nothing installed into ~/.m2) and times `bin/ferry image push` and `pull`
# typed by hand, each in a new shell, with no daemon running at first (the first command starts
# one), against zstd on each file: benchmarks/run-by-hand.sh [SIZE] [WORK_DIR] [ROUNDS]
# (default 1GiB, a temp dir, 5 rounds). Environment: MVN_FLAGS (e.g. -o).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
. benchmarks/classpath.sh
echo "uptime: $(uptime)"
exec java -Xmx1g -Djna.tmpdir="$here/benchmarks/target/jna" -cp "$cp" \
  io.ferry.benchmarks.ByHandBenchmark "${1:-1GiB}" "${2:-$(mktemp -d -t ferry-by-hand.XXXXXX)}" "${3:-5}"
