#!/usr/bin/env bash
# Builds Ferry and runs the proc-capture benchmark against gcore and the process_vm_readv limit:
#   benchmarks/run-capture.sh [SIZES] [WORK_DIR] [BUFFER]   e.g. benchmarks/run-capture.sh 256MiB,1GiB,2GiB /tmp/cap 4GiB
# BUFFER is the capture buffer (default 1GiB, ProcCapturer.DEFAULT_BUFFER_BYTES).
# Needs gcc and gdb (gcore), and root or the right to ptrace the test process.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
mvn -q -B -DskipTests -DskipITs install -pl benchmarks -am
mvn -q -B -pl benchmarks dependency:build-classpath -Dmdep.outputFile=target/classpath.txt
gcc -O1 -g -pthread -o benchmarks/target/victim capture-agent/src/test/resources/proc/victim.c
exec java -Xmx2g -Djna.tmpdir="$here/benchmarks/target/jna" \
  -cp "benchmarks/target/classes:$(cat benchmarks/target/classpath.txt)" \
  io.ferry.benchmarks.CaptureBenchmark "$here/benchmarks/target/victim" "${2:-$here/bench-work/capture}" "${1:-256MiB,1GiB,2GiB}" ${3:-}
