#!/usr/bin/env bash
# Builds Ferry (reactor, nothing installed into ~/.m2) and runs the staging benchmark:
# benchmarks/run-staging.sh [IMAGE_SIZE] [WORK_DIR] [ferry]
# With a third argument 'ferry', only Ferry's own rows and the encryption table run: no peer tools,
# and not bin/ferry, which builds and installs the distribution on first use.
# Environment: MVN_FLAGS (e.g. -o).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
. benchmarks/classpath.sh
echo "uptime: $(uptime)"
exec java -Xmx2g -Djna.tmpdir="$here/benchmarks/target/jna" -cp "$cp" \
  io.ferry.benchmarks.StagingBenchmark "${1:-2GiB}" "${2:-$here/bench-work}" ${3:+"$3"}
