#!/usr/bin/env bash
# Forecast accuracy on a multi-node job whose data changes, its agents on test hosts of their own
# (issue 39): the job of run-accuracy-nodes.sh (6 bash ranks, 2 per node, of 16, 32, 64, 128, 16 and
# 32 MiB: node n1 holds 192 MiB, the others 48; each generation's images all new random bytes or a
# copy of the rank's previous one; a checkpoint every INTERVAL), but each `ferry agent` n0, n1, n2 and
# its ranks on a host of its own: a network namespace fan0..fan2 with its own address (10.253.9.10-12)
# and host name (fan-h0..fan-h2) on a bridge, as the test bed of run-dmtcp-nodes.sh. The hosts share
# this machine's cores and disk (each agent has its own home; the store is one directory, as the
# nodes of a job share a store). The `ferry coordinator` listens on the bridge's address 10.253.9.1,
# so its embedded broker requires a login: a users file and the clients' `kafka.*` keys in a
# FERRY_CONFIG file of the work directory (0600). The agents do not listen for peers (no --partner):
# `--peer-listen off`. Then `ferry plan --accuracy` sets each forecast (at capture, and again at 25%,
# 50% and 75% of the bytes read for staging) beside what happened. Each agent logs the time of its
# sample at capture (WORK_DIR/agentN.log, CaptureSample at DEBUG).
#   [LOAD=1] benchmarks/run-accuracy-netns.sh [CHECKPOINTS] [WORK_DIR] [INTERVAL]   (default 16, bench-work/accuracy-netns, 6s)
# LOAD=1: one core kept busy (`sh -c 'while :; do :; done'`, bounded by `timeout`) from before the
# coordinator starts until the end: a steady neighbour. Needs root (namespaces), ip, unshare, python3.
# bin/ferry builds Ferry on first use (`mvn install`); build first where that must not happen.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
n="${1:-16}"
work="$(realpath -m "${2:-$here/bench-work/accuracy-netns}")"
interval="${3:-6s}"
me=run-accuracy-netns.sh
export PATH="$PATH:/usr/sbin:/sbin"
export FERRY_DAEMON=off # the long-running commands each in a JVM of their own
for tool in ip unshare python3 timeout; do
  command -v "$tool" > /dev/null || { echo "$me: $tool is not on PATH" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "$me: needs root (network namespaces)" >&2; exit 2; }
[[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] || { echo "$me: CHECKPOINTS must be a positive number, not '$n'" >&2; exit 2; }
# The interval in seconds, only to bound the waits below.
if [[ "$interval" =~ ^([0-9]+)s$ ]]; then isec=${BASH_REMATCH[1]}
elif [[ "$interval" =~ ^([0-9]+)m$ ]]; then isec=$((BASH_REMATCH[1] * 60))
else isec=60; fi
net=10.253.9
# In use by anything but this script's own bridge (left by a run killed with -9: taken down below).
if ip -o addr | grep " $net\." | grep -qv ": fanbr "; then echo "$me: $net.0/24 is in use here" >&2; exit 2; fi
ferry="$here/bin/ferry"
job=nodes3
stop="$work/stop"
rm -rf "$work"
mkdir -p "$work"
"$ferry" --version > /dev/null # builds Ferry on first use, before anything starts

pids=()
. "$here/benchmarks/netns-bed.sh"
cleanup() {
  set +e
  touch "$stop"
  # TERM first, so the coordinator and the agents close their logs; whatever is left after 10 s is killed.
  for p in "${pids[@]}" $(jobs -p); do kill "$p" 2> /dev/null; done
  local until=$((SECONDS + 10))
  while [ $SECONDS -lt $until ] && [ -n "$(jobs -pr)" ]; do sleep 0.2; done
  for p in $(jobs -p); do kill -9 "$p" 2> /dev/null; done
  bed_down fan 3
  wait 2> /dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM
bed_up fan "$net" 3
if command -v ping > /dev/null; then # each host reaches the coordinator's address before anything waits on it
  for i in 0 1 2; do
    ip netns exec "fan$i" ping -c 1 -W 5 "$net.1" > /dev/null 2>&1 \
      || { echo "$me: host fan$i does not reach $net.1 over the bridge" >&2; exit 1; }
  done
fi
# on I CMD...: CMD on host I (its network namespace and host name fan-hI)
on() {
  local i="$1"
  shift
  ip netns exec "fan$i" unshare --uts sh -c 'echo "fan-h$0" > /proc/sys/kernel/hostname && exec "$@"' "$i" "$@"
}
# await_line FILE PATTERN SECONDS [PID]: until FILE has a line with PATTERN; fails after SECONDS or once PID has ended.
await_line() {
  local until=$((SECONDS + $3))
  until grep -q -- "$2" "$1" 2> /dev/null; do
    if [ -n "${4:-}" ] && ! kill -0 "$4" 2> /dev/null && ! grep -q -- "$2" "$1" 2> /dev/null; then
      echo "$me: the process writing $1 ended before '$2':" >&2; tail -30 "$1" >&2; exit 1
    fi
    [ $SECONDS -lt "$until" ] || { echo "$me: no '$2' in $1 within $3 s" >&2; tail -30 "$1" >&2; exit 1; }
    sleep 0.1
  done
}

# The site's logins: SASL is required on an address beyond loopback.
site="$work/site"
mkdir -p "$site"
(
  umask 077
  password="pw-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')"
  printf '# NAME:PASSWORD\nbench:%s\n' "$password" > "$site/kafka-users"
  cat > "$site/ferry.conf" << EOF
kafka.embedded.users-file = $site/kafka-users
kafka.security.protocol = SASL_PLAINTEXT
kafka.sasl.mechanism = PLAIN
kafka.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username="bench" password="$password";
EOF
)
export FERRY_CONFIG="$site/ferry.conf"

if [ "${LOAD:-0}" = 1 ]; then
  # Bounded, so that it cannot outlive a script killed with -9: the run's own bound plus slack.
  timeout $((n * isec * 4 + 1200)) sh -c 'while :; do :; done' &
  pids+=($!)
  echo "load: one core kept busy (pid $!)"
fi
echo "uptime at start: $(uptime)"
kafka="$net.1:$(python3 -c 'import socket; s=socket.socket(); s.bind(("'"$net.1"'", 0)); print(s.getsockname()[1])')"
"$ferry" coordinator --home "$work/coordinator" --listen "$kafka" --http off \
  --log-level io.ferry.coordinator.predict.Predictor=DEBUG > "$work/coordinator.log" 2>&1 &
pids+=($!)
await_line "$work/coordinator.log" "serving jobs" 300 $!
agents=()
for i in 0 1 2; do
  on "$i" "$ferry" agent --kafka "$kafka" --node "n$i" --home "$work/n$i" --heartbeat 1s --peer-listen off \
    --log-level io.ferry.agent.CaptureSample=DEBUG > "$work/agent$i.log" 2>&1 &
  agents+=($!)
  pids+=($!)
done
for i in 0 1 2; do await_line "$work/agent$i.log" "ferry agent n$i" 300 "${agents[i]}"; done
# Rank: on SIGUSR2, generation g's image is new random bytes or a copy of its previous one.
rank='mib=$(( 16 << (FERRY_RANK % 4) )); prev="'"$work"'/prev-$FERRY_RANK";'
rank+=" trap 'g=\$(cat \"\$FERRY_CKPT_DIR/REQUEST\"); d=\"\$FERRY_CKPT_DIR/\$g\";"
rank+=" if [ ! -f \"\$prev\" ] || [ \$((g % 3)) = 0 ] || [ \$((g % 5)) = 2 ]; then head -c \${mib}M /dev/urandom > \"\$prev\"; fi;"
rank+=" cp \"\$prev\" \"\$d/memory\"; : > \"\$d/DONE\"' USR2;"
rank+=" while [ ! -f '$stop' ]; do sleep 0.2; done"
"$ferry" run --kafka "$kafka" --job "$job" --ranks 6 --nodes n0,n1,n2 --interval "$interval" \
  --store "$work/store" -- bash -c "$rank" > "$work/$job.log" 2>&1 &
run=$!
pids+=($run)
# Each host runs its agent and that node's two ranks, and nothing else of the job.
await_line "$work/$job.log" "generation 0 established on the" $((isec * 4 + 300)) $run
for i in 0 1 2; do
  ranks=0
  for p in $(ip netns pids "fan$i"); do [ "$(cat "/proc/$p/comm" 2> /dev/null)" != bash ] || ranks=$((ranks + 1)); done
  echo "host fan-h$i ($net.1$i): agent n$i and $ranks rank processes"
  [ "$ranks" = 2 ] || { echo "$me: host fan$i runs $ranks ranks, not 2" >&2; exit 1; }
done
# Generations 0 to n-1 established: n checkpoints. The bound allows each four intervals, and the start.
await_line "$work/$job.log" "generation $((n - 1)) established on the" $((n * isec * 4 + 300)) $run
touch "$stop"
wait "$run" || { echo "$me: ferry run of $job failed" >&2; tail -30 "$work/$job.log" >&2; exit 1; }
echo "uptime at end: $(uptime)"
for i in 0 1 2; do
  echo "agent n$i: $(grep -c 'staging should write' "$work/agent$i.log" || true) samples at capture logged in $work/agent$i.log"
done
"$ferry" plan --accuracy "$job" --kafka "$kafka"
