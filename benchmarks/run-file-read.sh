#!/usr/bin/env bash
# Builds Ferry (reactor, nothing installed into ~/.m2) and measures what reading a directory's files
# from the page cache into heap arrays costs a thread, through the JDK's temporary direct buffer and
# through FileIo's own small one: benchmarks/run-file-read.sh DIR [ROUNDS] (e.g. the seeded image
# that run-staging.sh leaves in WORK_DIR/image). Environment: MVN_FLAGS (e.g. -o).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
. benchmarks/classpath.sh
echo "uptime: $(uptime)"
exec java -Xmx1g -cp "$cp" io.ferry.benchmarks.FileReadBenchmark "$1" "${2:-5}"
