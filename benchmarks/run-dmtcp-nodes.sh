#!/usr/bin/env bash
# DMTCP ranks across nodes (issue 37): one job of three ranks of a TCP ring (the scenario program
# capture-agent/src/test/resources/scenario/ring.c: each step every rank sends its value to the
# next rank's host and mixes in what the previous one sent), one rank per test host (a network
# namespace with its own host name, and a mount namespace giving each its own Ferry home at one
# path, as the suite's test bed does), in the same run:
# 1. Ferry: a `ferry coordinator` (embedded broker, SASL), three `ferry agent`s, `ferry run --nodes
#    n0,n1,n2 --capture dmtcp --partner --auto-recover --interval 3s`: the job's one DMTCP computation,
#    led by n0's agent. Per generation: the longest rank's stall and request to established on the
#    store, as Ferry reports them. Then node n1 is lost (every process of its host SIGKILLed, its
#    cache removed): kill to "ranks placed anew" (the heartbeat timeout, 5 s here), to "restored"
#    (every node's images in place), and to the computation running again (the lead's fresh
#    coordinator says NUM_PEERS=3 RUNNING=yes).
# 2. What a user would run instead: the same ring under plain DMTCP by hand, one `dmtcp_coordinator`
#    on host 0, `dmtcp_launch --join-coordinator` on each host writing to that host's disk, one
#    `dmtcp_command --bcheckpoint` every 3 s (gzip, DMTCP's default, then `--no-gzip`): the stall is
#    its wall time. Then every process killed, and `dmtcp_restart` on each host from its own disk
#    joined to a fresh coordinator: kill to NUM_PEERS=3 RUNNING=yes (no node is lost: the best case).
#   benchmarks/run-dmtcp-nodes.sh [GENERATIONS] [WORK_DIR]      (default 6, bench-work/dmtcp-nodes)
# Needs root (namespaces), gcc, python3, and a DMTCP with Ferry's patch for sockets across hosts
# (tools/build-dmtcp.sh; /opt/ckpt-tools/dmtcp-ferry/bin is put first on PATH).
set -euo pipefail
# Nothing but 0-2 reaches the ranks: DMTCP takes a pipe two ranks inherited for a socket they share, and a
# restart of ranks that share one hangs.
for fd in /proc/$$/fd/*; do
  fd=${fd##*/}
  case "$fd" in 0 | 1 | 2 | 255) ;; *) eval "exec $fd>&-" 2> /dev/null || true ;; esac
done
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
gens="${1:-6}"
work="$(realpath -m "${2:-$here/bench-work/dmtcp-nodes}")"
export PATH="/opt/ckpt-tools/dmtcp-ferry/bin:/opt/ckpt-tools/bin:$PATH"
export FERRY_DAEMON=off
for tool in dmtcp_launch dmtcp_command dmtcp_restart gcc python3 ip unshare; do
  command -v "$tool" > /dev/null || { echo "run-dmtcp-nodes.sh: $tool is not on PATH" >&2; exit 2; }
done
grep -qx 0001-cross-host-sockets.patch "$(dirname "$(command -v dmtcp_launch)")/../share/ferry/dmtcp-patches" 2>/dev/null \
  || { echo "run-dmtcp-nodes.sh: the DMTCP on PATH lacks the patch for sockets across hosts: run tools/build-dmtcp.sh" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "run-dmtcp-nodes.sh: needs root (network and mount namespaces)" >&2; exit 2; }
ferry="$here/bin/ferry"
net=10.253.7
if ip -o addr | grep -q " $net\."; then echo "run-dmtcp-nodes.sh: $net.0/24 is in use here" >&2; exit 2; fi
rm -rf "$work"
mkdir -p "$work/home"
"$ferry" --version > /dev/null # builds Ferry on first use, before anything is timed
gcc -O1 -o "$work/ring" "$here/capture-agent/src/test/resources/scenario/ring.c"
echo "uptime: $(uptime)"
hosts="$net.10,$net.11,$net.12"
steps=$(( (gens * 3 + 40) * 40 )) # 25 ms a step: the run outlasts the generations and the node loss
now() { date +%s.%N; }

. "$here/benchmarks/netns-bed.sh"
cleanup() {
  set +e
  for p in $(jobs -p); do kill -9 "$p" 2> /dev/null; done
  bed_down fdn 3
  wait 2> /dev/null
}
trap cleanup EXIT
bed_up fdn "$net" 3
mkdir -p "$work/n0" "$work/n1" "$work/n2"
# on I CMD...: CMD on host I (its network, host name fdn-hI, and its own directory at $work/home)
on() {
  local i="$1"
  shift
  ip netns exec "fdn$i" unshare --uts --mount --propagation private sh -c \
    'echo "fdn-h$0" > /proc/sys/kernel/hostname && mount --bind "$1" "$2" && shift 2 && exec "$@"' \
    "$i" "$work/n$i" "$work/home" "$@"
}
await_line() { # FILE PATTERN SECONDS
  local until=$((SECONDS + $3))
  until grep -q -- "$2" "$1" 2> /dev/null; do
    [ $SECONDS -lt "$until" ] || { echo "run-dmtcp-nodes.sh: no '$2' in $1 within $3 s" >&2; tail -20 "$1" >&2; exit 1; }
    sleep 0.05
  done
}
running() { # HOST PORT: the computation at HOST:PORT has 3 processes and runs
  dmtcp_command --coord-host "$1" --coord-port "$2" --status 2> /dev/null | tr '\n' ' ' | grep -q "NUM_PEERS=3 *RUNNING=yes"
}
await_running() { # HOST PORT SECONDS
  local until=$((SECONDS + $3))
  until running "$1" "$2"; do
    [ $SECONDS -lt "$until" ] || { echo "run-dmtcp-nodes.sh: $1:$2 not running 3 processes within $3 s" >&2; exit 1; }
    sleep 0.05
  done
}

# 1. Ferry across three hosts.
site="$work/site"
mkdir -p "$site"
umask 077
password="pw-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')"
printf '# NAME:PASSWORD\nbench:%s\n' "$password" > "$site/kafka-users"
od -An -N16 -tx8 /dev/urandom | tr -d ' \n' > "$site/peer-secret"
cat > "$site/ferry.conf" << EOF
peer.secret-file = $site/peer-secret
kafka.embedded.users-file = $site/kafka-users
kafka.security.protocol = SASL_PLAINTEXT
kafka.sasl.mechanism = PLAIN
kafka.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username="bench" password="$password";
EOF
umask 022
export FERRY_CONFIG="$site/ferry.conf"
kafka="$net.1:$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$ferry" coordinator --home "$work/coord" --listen "$kafka" --http off --heartbeat-timeout 5s > "$work/coord.log" 2>&1 &
await_line "$work/coord.log" "serving jobs" 120
for i in 0 1 2; do
  on "$i" "$ferry" agent --kafka "$kafka" --node "n$i" --home "$work/home" --heartbeat 1s > "$work/agent$i.log" 2>&1 &
done
for i in 0 1 2; do await_line "$work/agent$i.log" "ferry agent n$i" 120; done
base=$(python3 -c 'import random; print(random.randrange(20000, 60000))')
"$ferry" run --kafka "$kafka" --job ring3 --ranks 3 --nodes n0,n1,n2 --interval 3s --auto-recover --partner \
  --capture dmtcp --store "$work/store" -- bash -c \
  "RING_HOSTS=$hosts exec $work/ring $work/out.\$FERRY_RANK.txt $steps 25 $base" > "$work/run.log" 2>&1 &
run=$!
await_line "$work/run.log" "generation $((gens + 1)) established" $((gens * 10 + 120))
await_line "$work/run.log" "generation $((gens + 1)): n1's images of ranks 1 copied" 60
t_kill=$(now)
for p in $(ip netns pids fdn1); do kill -9 "$p" 2> /dev/null || true; done
rm -rf "$work/n1/cache"
await_line "$work/run.log" "ranks placed anew" 60
t_placed=$(now)
until [ "$(grep -c "restored generation" <(sed -n '/ranks placed anew/,$p' "$work/run.log"))" -ge 2 ]; do
  kill -0 "$run" 2> /dev/null || { echo "run-dmtcp-nodes.sh: ferry run ended before the restore" >&2; exit 1; }
  sleep 0.05
done
t_restored=$(now)
port=""
until [ -n "$port" ] && running "$net.10" "$port"; do
  newest=$(find "$work/n0" -path '*.dmtcp-coordinator/port' -newermt "@$t_kill" 2> /dev/null | head -1)
  port=$([ -n "$newest" ] && cat "$newest" || true)
  sleep 0.05
done
t_running=$(now)
python3 -c "print(f'Ferry, node n1 lost: ranks placed anew after {$t_placed-$t_kill:.2f} s (heartbeat timeout 5 s),'
  f' every node restored after {$t_restored-$t_kill:.2f} s, the computation running again after {$t_running-$t_kill:.2f} s'
  f' ({$t_running-$t_placed:.2f} s after the loss was seen)')" > "$work/ferry-restart.txt"
wait "$run" || { echo "run-dmtcp-nodes.sh: ferry run failed" >&2; tail -30 "$work/run.log" >&2; exit 1; }
python3 - "$work/run.log" "$gens" << 'PY' > "$work/ferry.txt"
import re, statistics, sys
log, gens = open(sys.argv[1]).read(), int(sys.argv[2])
stall = {int(g): float(s) for g, s in re.findall(r"generation (\d+) captured: .*longest stall ([0-9.]+) s", log)}
est = {int(g): float(s) for g, s in re.findall(r"generation (\d+) established on the \S+ store, ([0-9.]+) s after", log)}
gs = [g for g in sorted(est) if g in stall and 1 <= g <= gens]  # generation 0: the ranks still connecting
s, e = [stall[g] for g in gs], [est[g] for g in gs]
print(f"ferry {len(gs)} {statistics.median(s):.2f} {min(s):.2f} {max(s):.2f} {statistics.median(e):.2f} {min(e):.2f} {max(e):.2f}")
PY
refs=()
for r in 0 1 2; do
  "$work/ring" "$work/ref.$r" "$steps" 0 $((base + 100)) "$r" 3 > /dev/null &
  refs+=($!)
done
wait "${refs[@]}"
for r in 0 1 2; do
  cmp -s "$work/ref.$r" "$work/out.$r.txt" || { echo "run-dmtcp-nodes.sh: rank $r's file differs from an uninterrupted run's" >&2; exit 1; }
done
for i in 0 1 2; do for p in $(ip netns pids "fdn$i"); do kill -9 "$p" 2> /dev/null || true; done; done
for p in $(jobs -p); do kill -9 "$p" 2> /dev/null || true; done

# 2. Plain DMTCP by hand across the same hosts: gzip (the default), then --no-gzip.
by_hand() { # NAME [DMTCP_LAUNCH_FLAGS...]
  local name="$1" dir="$work/$1"
  shift
  mkdir -p "$dir/coord" "$work/n0/$name" "$work/n1/$name" "$work/n2/$name"
  on 0 dmtcp_coordinator --coord-port 0 --port-file "$work/home/$name/port" --ckptdir "$work/home/$name" \
    --exit-on-last > "$dir/coord.log" 2>&1 < /dev/null &
  until [ -s "$work/n0/$name/port" ]; do sleep 0.05; done
  local p
  p=$(cat "$work/n0/$name/port")
  for r in 0 1 2; do
    on "$r" env RING_HOSTS="$hosts" dmtcp_launch --join-coordinator --coord-host "$net.10" --coord-port "$p" \
      --ckptdir "$work/home/$name" --ckpt-open-files --allow-file-overwrite "$@" "$work/ring" "$work/home/$name/out" "$steps" 25 $((base + 200)) \
      "$r" 3 > "$dir/rank$r.log" 2>&1 < /dev/null &
  done
  await_running "$net.10" "$p" 60
  : > "$dir/checkpoints"
  for g in $(seq 0 "$gens"); do
    sleep 3
    local t0 t1
    t0=$(now)
    dmtcp_command --coord-host "$net.10" --coord-port "$p" --bcheckpoint > /dev/null
    t1=$(now)
    [ "$g" = 0 ] || echo "$t0 $t1" >> "$dir/checkpoints" # generation 0 as Ferry's: not counted
  done
  local bytes t_down
  bytes=$(du -scb "$work"/n?/"$name"/ckpt_* | tail -1 | cut -f1)
  t_down=$(now)
  for i in 0 1 2; do for q in $(ip netns pids "fdn$i"); do kill -9 "$q" 2> /dev/null || true; done; done
  rm -f "$work/n0/$name/port"
  on 0 dmtcp_coordinator --coord-port 0 --port-file "$work/home/$name/port" --ckptdir "$work/home/$name" \
    --exit-on-last > "$dir/coord2.log" 2>&1 < /dev/null &
  until [ -s "$work/n0/$name/port" ]; do sleep 0.02; done
  p=$(cat "$work/n0/$name/port")
  for r in 0 1 2; do
    on "$r" sh -c 'exec dmtcp_restart --join-coordinator --coord-host "$0" --coord-port "$1" "$2"/ckpt_*.dmtcp' \
      "$net.10" "$p" "$work/home/$name" > "$dir/restart$r.log" 2>&1 < /dev/null &
  done
  await_running "$net.10" "$p" 60
  local t_up
  t_up=$(now)
  for i in 0 1 2; do for q in $(ip netns pids "fdn$i"); do kill -9 "$q" 2> /dev/null || true; done; done
  python3 - "$dir/checkpoints" "$name" "$bytes" "$t_down" "$t_up" << 'PY'
import statistics, sys
rows = [tuple(map(float, l.split())) for l in open(sys.argv[1])]
s = [b - a for a, b in rows]
print(f"{sys.argv[2]} {len(s)} {statistics.median(s):.2f} {min(s):.2f} {max(s):.2f} {int(sys.argv[3]) / 3 / 1048576:.1f} "
      f"{float(sys.argv[5]) - float(sys.argv[4]):.2f}")
PY
}
by_hand gzip > "$work/gzip.txt"
by_hand nogzip --no-gzip > "$work/nogzip.txt"

read -r _ n fmed fmin fmax emed emin emax < "$work/ferry.txt"
read -r _ gn gmed gmin gmax gmib grestart < "$work/gzip.txt"
read -r _ nn nmed nmin nmax nmib nrestart < "$work/nogzip.txt"
echo
echo "| checkpoint of 3 ring ranks on 3 hosts | generations | stall, median (range) | request to durable, median (range) | gzip stall / this |"
echo "|---|---:|---|---|---:|"
echo "| \`dmtcp_launch\` by hand, gzip | $gn | $gmed s ($gmin-$gmax) | $gmed s (each host's disk) | 1.00x |"
echo "| \`dmtcp_launch --no-gzip\` by hand | $nn | $nmed s ($nmin-$nmax) | $nmed s (each host's disk) | $(python3 -c "print(f'{$gmed/$nmed:.1f}x')") |"
echo "| Ferry \`--capture dmtcp --partner\` | $n | $fmed s ($fmin-$fmax) | $emed s ($emin-$emax), store | $(python3 -c "print(f'{$gmed/$fmed:.1f}x')") |"
echo
echo "images: ${gmib} MiB per rank gzipped, ${nmib} MiB raw"
echo "plain DMTCP, every process killed, dmtcp_restart on each host from its own disk: running again after $grestart s (gzip), $nrestart s (raw)"
cat "$work/ferry-restart.txt"
echo "every rank's file equal to an uninterrupted run's"
