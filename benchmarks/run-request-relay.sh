#!/usr/bin/env bash
# What jobs with owners cost a user's command (docs/operators.md "Jobs have owners"): a start event
# appended by a user's login, through its request topic and the coordinator's relay, against the
# same appended by an operator's login directly, until each is in ferry.events; interleaved on one
# embedded broker with Kafka's authorizer on and a live coordinator.
#   benchmarks/run-request-relay.sh [SAMPLES]      (default 200 of each; MVN_FLAGS=-o to build offline)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
. benchmarks/classpath.sh
work="$(mktemp -d -t ferry-relay.XXXXXX)"
trap 'rm -rf "$work"' EXIT
echo "uptime: $(uptime)"
java -Xmx1g ${JAVA_OPTS:-} -cp "$cp" io.ferry.benchmarks.RequestRelayBenchmark "${1:-200}" "$work"
