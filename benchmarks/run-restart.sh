#!/usr/bin/env bash
# Builds Ferry (reactor, nothing installed into ~/.m2) and times a restart from the node-local
# cache, and from a partner node's cache over loopback TCP, against cat of the same bytes: benchmarks/run-restart.sh [SIZE] [WORK_DIR] [ROUNDS]
# (default 4GiB, a temp dir, 2 rounds). The work dir needs about 2.3 x SIZE of free disk.
# Environment: MVN_FLAGS (e.g. -o), JAVA_OPTS.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
. benchmarks/classpath.sh
echo "uptime: $(uptime)"
exec java -Xmx1g ${JAVA_OPTS:-} -Djna.tmpdir="$here/benchmarks/target/jna" -cp "$cp" \
  io.ferry.benchmarks.RestartBenchmark "${1:-4GiB}" "${2:-$(mktemp -d -t ferry-restart.XXXXXX)}" "${3:-2}"
