#!/usr/bin/env bash
# Builds Ferry and runs the staging benchmark: benchmarks/run-staging.sh [IMAGE_SIZE] [WORK_DIR]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
mvn ${MVN_FLAGS:-} -q -B -DskipTests -DskipITs install -pl benchmarks -am
mvn ${MVN_FLAGS:-} -q -B -pl benchmarks dependency:build-classpath -Dmdep.outputFile=target/classpath.txt
exec java -Xmx2g -Djna.tmpdir="$here/benchmarks/target/jna" \
  -cp "benchmarks/target/classes:$(cat benchmarks/target/classpath.txt)" \
  io.ferry.benchmarks.StagingBenchmark "${1:-2GiB}" "${2:-$here/bench-work}"
