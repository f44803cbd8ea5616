#!/usr/bin/env bash
# Builds Ferry and runs the remote-store benchmark (HDFS MiniDFSCluster and s3proxy on loopback):
#   benchmarks/run-remote.sh [IMAGE_SIZE] [WORK_DIR] [LINK_RATE]
# The second pass shapes loopback to LINK_RATE with tc (root): a node's share of the store.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
mvn -q -B -DskipTests -DskipITs install -pl benchmarks -am
mvn -q -B -pl benchmarks dependency:build-classpath -Dmdep.outputFile=target/classpath.txt
# Never leave loopback shaped, whatever happens to the JVM.
trap 'tc qdisc del dev lo root 2>/dev/null || true' EXIT
java -Xmx3g -Djna.tmpdir="$here/benchmarks/target/jna" \
  -cp "benchmarks/target/classes:$(cat benchmarks/target/classpath.txt)" \
  io.ferry.benchmarks.RemoteStoreBenchmark "${1:-1GiB}" "${2:-$here/bench-work}" "${3:-1gbit}"
