#!/usr/bin/env bash
# Transparent checkpoints (issue 37): Ferry's `--capture dmtcp` and `--capture criu` beside what a
# user would run instead, plain `dmtcp_launch` (gzip -1, DMTCP's default) or `dmtcp_launch --no-gzip`
# with `dmtcp_command --bcheckpoint`, in one run, on one program (benchmarks/transparent-state.py:
# Python holding MIB MiB of random doubles, 5% of them rewritten every 3 s in scattered 256 KiB runs).
#   benchmarks/run-transparent.sh [SIZES_MIB] [WORK_DIR] [GENERATIONS]   (default: 32,256, bench-work/transparent, 4)
# PARTS (default 1,2,3) picks the parts below (4: not by default). COLD=1: the page cache is dropped
# before each kill of parts 3 and 4 (root), so every restart reads its images from the disk.
# 1. Stall per checkpoint and time to established, one rank of each size: DMTCP's stall is the
#    wall time of `dmtcp_command --bcheckpoint` (its images are fsynced when it returns); Ferry's is
#    what Ferry reports (`ferry list --json`: the longest rank stall, and seconds from request to
#    established on the store). Beside both, the pause the program itself saw. Generations captured
#    before the state was filled are not counted.
# 2. Bytes stored per generation, 4 ranks of 32 MiB: Ferry's stored bytes (as it reports them, and
#    the store directory's growth) against DMTCP's gzip images and `zstd -1` of DMTCP's raw images.
# 3. Restart, kill to resumed (the program's first step after SIGKILL), one rank of the first size:
#    Ferry `--auto-recover` from its local cache and from its store (the cache's copies removed
#    before the kill), against `dmtcp_restart` of DMTCP's own images on the same disk, started at
#    the kill. Images are in the page cache for all, unless COLD=1.
# 4. Restart from a partner's copy: a coordinator and two agents on loopback, two ranks, one per
#    node, `--partner`; n0's cached copies removed and its rank killed: rank 0 comes back from the
#    copy in n1's cache, over the peer port (restart_partner below).
# Needs DMTCP and CRIU on PATH (/opt/ckpt-tools/bin is added), zstd, root (CRIU). Environment: RANKS (4).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sizes="${1:-32,256}"
work="${2:-$here/bench-work/transparent}"
gens="${3:-4}"
ranks="${RANKS:-4}"
parts=",${PARTS:-1,2,3},"
export PATH="/opt/ckpt-tools/bin:$PATH"
for tool in dmtcp_launch dmtcp_command criu zstd python3; do
  command -v "$tool" > /dev/null || { echo "run-transparent.sh: $tool is not on PATH" >&2; exit 2; }
done
state="$here/benchmarks/transparent-state.py"
ferry="$here/bin/ferry"
rm -rf "$work"
mkdir -p "$work"
"$ferry" --version > /dev/null # builds Ferry on first use, before anything is timed
echo "uptime: $(uptime)"

now() { date +%s.%N; }
# await_ready FILE_PREFIX COUNT PID: waits until COUNT ranks have filled their state.
await_ready() {
  while [ "$(ls "$1".* 2> /dev/null | wc -l)" -lt "$2" ]; do
    kill -0 "$3" 2> /dev/null || { echo "run-transparent.sh: the program ended before it was ready ($1)" >&2; exit 1; }
    sleep 0.2
  done
}

# dmtcp NAME MIB RANKS [DMTCP_LAUNCH_FLAGS...]: RANKS copies of the program under one DMTCP
# coordinator, checkpointed GENERATIONS times, 3 s of the program's time apart. Writes
# NAME/checkpoints: generation, seconds of --bcheckpoint, bytes of the images, bytes of zstd -1 of them.
dmtcp() {
  local name="$1" mib="$2" n="$3" dir="$work/$1"
  shift 3
  mkdir -p "$dir/ck"
  local seconds=$((3 * gens + 30)) # ample: the program stops at the end of the measurement
  dmtcp_launch --new-coordinator --coord-port 0 --port-file "$dir/port" --ckptdir "$dir/ck" "$@" \
    python3 "$state" "$mib" "$seconds" 5 3 "$dir/ready" > "$dir/out.0" 2>&1 &
  local first=$!
  while [ ! -s "$dir/port" ]; do sleep 0.1; done
  local port
  port="$(cat "$dir/port")"
  for r in $(seq 1 $((n - 1))); do
    dmtcp_launch --join-coordinator --coord-port "$port" --ckptdir "$dir/ck" "$@" \
      python3 "$state" "$mib" "$seconds" 5 3 "$dir/ready" > "$dir/out.$r" 2>&1 &
  done
  await_ready "$dir/ready" "$n" "$first"
  : > "$dir/checkpoints"
  for g in $(seq 0 $((gens - 1))); do
    sleep 3
    local t0 t1
    t0="$(now)"
    dmtcp_command --coord-port "$port" --bcheckpoint > /dev/null
    t1="$(now)"
    local bytes zst=0 f
    bytes="$(du -scb "$dir"/ck/ckpt_* | tail -1 | cut -f1)"
    if [ "$name" != "${name%nogzip*}" ]; then
      for f in "$dir"/ck/ckpt_*.dmtcp; do zst=$((zst + $(zstd -1 -q -c "$f" | wc -c))); done
    fi
    echo "$g $(echo "$t1 - $t0" | bc) $bytes $zst" >> "$dir/checkpoints"
  done
  dmtcp_command --coord-port "$port" --kill > /dev/null 2>&1 || true
  wait
}

# ferry_job NAME CAPTURE MIB RANKS: `ferry run` of the program with a checkpoint every 3 s until
# GENERATIONS generations after its state was filled are established. Writes NAME/list.json,
# NAME/first (the first generation counted) and NAME/store-growth (generation, store bytes once
# it was established).
ferry_job() {
  local name="$1" capture="$2" mib="$3" n="$4" dir="$work/$1"
  mkdir -p "$dir"
  local seconds=$((3 * gens + 5))
  "$ferry" run --job "$name" --ranks "$n" --interval 3s --capture "$capture" --home "$dir/home" \
    -- python3 "$state" "$mib" "$seconds" 5 3 "$dir/ready" > "$dir/run.log" 2>&1 &
  local pid=$! seen=0 first=""
  : > "$dir/store-growth"
  while kill -0 "$pid" 2> /dev/null; do
    if [ -z "$first" ] && [ "$(ls "$dir"/ready.* 2> /dev/null | wc -l)" -ge "$n" ]; then
      # A capture under way when the last rank got ready may hold a half-filled state: skip it too.
      first=$(($(grep -c ' captured: ' "$dir/run.log" || true) + 1))
    fi
    local est
    est="$(grep -c ' established on the ' "$dir/run.log" || true)"
    if [ "$est" -gt "$seen" ]; then
      seen="$est"
      echo "$(grep ' established on the ' "$dir/run.log" | tail -1 | sed 's/.*generation \([0-9]*\) .*/\1/') $(du -sb "$dir/home/store" | cut -f1)" >> "$dir/store-growth"
    fi
    sleep 0.2
  done
  wait "$pid" || { echo "run-transparent.sh: ferry run of $name failed:" >&2; tail -30 "$dir/run.log" >&2; exit 1; }
  echo "${first:-1}" > "$dir/first"
  "$ferry" list "$name" --json --home "$dir/home" > "$dir/list.json"
}

# resumed_after FILE...: waits (120 s at most) for a new "pause" line in any FILE, the program's
# first step after a restore, and prints when it appeared (polled every 10 ms). Run it in the
# background before the kill; it takes the files' sizes first.
resumed_after() {
  python3 - "$@" <<'WATCH'
import os, sys, time
files = sys.argv[1:]
at = {f: os.path.getsize(f) if os.path.exists(f) else 0 for f in files}
print("", flush=True)  # the caller reads this line: sizes taken, kill now
end = time.time() + 120
while time.time() < end:
    for f in files:
        if os.path.exists(f) and os.path.getsize(f) > at[f]:
            with open(f, "rb") as fh:
                fh.seek(at[f])
                new = fh.read()
            if b"pause " in new:
                print(f"{time.time():.3f}", flush=True)
                sys.exit(0)
    time.sleep(0.01)
print("never", flush=True)
WATCH
}

# kill_and_time DIR PID FILE...: SIGKILLs PID, waits until the program runs again (see
# resumed_after), appends "seconds" to DIR/restart. Without a restart command given in
# $restart_cmd, whoever recovers is already watching (Ferry); with one, it runs at the kill.
kill_and_time() {
  local dir="$1" victim="$2"
  shift 2
  coproc watch { resumed_after "$@"; }
  local line
  read -r line <&"${watch[0]}"
  if [ "${COLD:-0}" = 1 ]; then # a cold page cache: what a node rebooted or long busy with other work has
    sync
    echo 3 > /proc/sys/vm/drop_caches
  fi
  local t0
  t0="$(now)"
  kill -9 "$victim"
  if [ -n "${restart_cmd:-}" ]; then eval "$restart_cmd" & fi
  read -r line <&"${watch[0]}"
  [ "$line" != never ] || { echo "run-transparent.sh: $dir never resumed" >&2; return 1; }
  echo "$line - $t0" | bc >> "$dir/restart"
}

# rank_pid DIR ROOT: the pid of the program whose ready file is in DIR, the newest such descendant
# of ROOT if there is one. Its first word is the interpreter (`ferry run`'s own command line holds
# the same words); once DMTCP restored it, its command line is "[DMTCP:python3]".
rank_pid() {
  python3 - "$1" "$2" <<'FIND'
import re, subprocess, sys
mine = re.compile(r"^\S*python3[.0-9]* \S*transparent-state\.py .* " + re.escape(sys.argv[1]) + r"/ready(\.[0-9]+)?$")
procs = {}
for line in subprocess.run(["ps", "-e", "-o", "pid=,ppid=,args="], capture_output=True, text=True).stdout.splitlines():
    pid, ppid, args = line.split(None, 2) + [""] * (3 - len(line.split(None, 2)))
    procs[int(pid)] = (int(ppid), args)
def below(pid):
    while pid in procs and pid > 1:
        if pid == int(sys.argv[2]):
            return True
        pid = procs[pid][0]
    return False
hits = [p for p, (_, a) in procs.items() if below(p) and (mine.match(a) or a.startswith("[DMTCP:python3"))]
hits = hits or [p for p, (_, a) in procs.items() if mine.match(a)]
if not hits:
    sys.exit("run-transparent.sh: no rank found for " + sys.argv[1])
print(max(hits))
FIND
}

# restart_ferry NAME CAPTURE MIB SOURCE: one rank, a checkpoint requested once its state is filled,
# then 2 s later SIGKILLed (SOURCE remote: the cache's copies removed first), ROUNDS times.
restart_ferry() {
  local name="$1" capture="$2" mib="$3" source="$4" dir="$work/$1"
  mkdir -p "$dir"
  "$ferry" run --job "$name" --ranks 1 --interval 0 --capture "$capture" --auto-recover --halt-grace 0 \
    --home "$dir/home" -- python3 "$state" "$mib" 600 5 3 "$dir/ready" > "$dir/run.log" 2>&1 &
  local pid=$!
  await_ready "$dir/ready" 1 "$pid"
  for round in $(seq 1 "${ROUNDS:-2}"); do
    local est
    est="$(grep -c ' established on the ' "$dir/run.log" || true)"
    "$ferry" checkpoint "$name" --home "$dir/home" > /dev/null
    while [ "$(grep -c ' established on the ' "$dir/run.log" || true)" -le "$est" ]; do
      kill -0 "$pid" 2> /dev/null || { echo "run-transparent.sh: ferry run of $name ended:" >&2; tail -30 "$dir/run.log" >&2; exit 1; }
      sleep 0.2
    done
    sleep 2
    if [ "$source" = remote ]; then rm -rf "$dir/home/cache/$name"/[0-9]*; fi
    local victim
    victim="$(rank_pid "$dir" "$pid")"
    restart_cmd="" kill_and_time "$dir" "$victim" "$dir/run.log"
    sleep 3
  done
  kill -TERM "$pid"
  wait "$pid" || true
}

# restart_dmtcp NAME MIB [DMTCP_LAUNCH_FLAGS...]: one rank under dmtcp_launch, a --bcheckpoint once
# its state is filled, SIGKILLed 2 s later and at once `dmtcp_restart` of its images; ROUNDS
# times, each from a fresh launch.
restart_dmtcp() {
  local name="$1" mib="$2" dir="$work/$1"
  shift 2
  for round in $(seq 1 "${ROUNDS:-2}"); do
    rm -rf "$dir/ck" "$dir"/ready.* "$dir/port"
    mkdir -p "$dir/ck"
    dmtcp_launch --new-coordinator --coord-port 0 --port-file "$dir/port" --ckptdir "$dir/ck" "$@" \
      python3 "$state" "$mib" 600 5 3 "$dir/ready" > "$dir/out.0" 2>&1 &
    local launched=$!
    await_ready "$dir/ready" 1 "$launched"
    dmtcp_command --coord-port "$(cat "$dir/port")" --bcheckpoint > /dev/null
    sleep 2
    local victim
    victim="$(rank_pid "$dir" "$launched")"
    rm -f "$dir/port"
    restart_cmd="dmtcp_restart --new-coordinator --coord-port 0 --port-file '$dir/port' '$dir'/ck/ckpt_*.dmtcp >> '$dir/out.r' 2>&1" \
      kill_and_time "$dir" "$victim" "$dir/out.0" "$dir/out.r"
    dmtcp_command --coord-port "$(cat "$dir/port")" --kill > /dev/null 2>&1 || true
    wait 2> /dev/null || true
  done
}

# free_port: a TCP port free on loopback now.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# await_line FILE PATTERN PID: waits until FILE holds a line matching PATTERN (grep -E) while PID lives.
await_line() {
  until grep -qE "$2" "$1" 2> /dev/null; do
    kill -0 "$3" 2> /dev/null || { echo "run-transparent.sh: waiting for '$2' in $1, but $3 ended:" >&2; tail -30 "$1" >&2; exit 1; }
    sleep 0.2
  done
}

# restart_partner NAME CAPTURE MIB: a coordinator and two agents (n0, n1) on loopback, `ferry run
# --nodes n0,n1 --partner` of two ranks, one per node; once a generation is established and n0's
# images of it are copied into n1's cache, n0's own cached copies are removed and its rank
# SIGKILLed: the rollback restores rank 0 from the partner copy in n1's cache (fetched over the
# peer port, verified) and rank 1 from n1's own cache. ROUNDS times; the time is the kill to
# rank 0's first step. Each rank's ready file carries its rank: under DMTCP the first process of
# every computation (one per node) has the same virtual pid.
restart_partner() {
  local name="$1" capture="$2" mib="$3" dir="$work/$1"
  mkdir -p "$dir"
  local kafka pids=()
  kafka="127.0.0.1:$(free_port)"
  "$ferry" coordinator --home "$dir/coord" --listen "$kafka" --http off > "$dir/coord.log" 2>&1 &
  pids+=($!)
  await_line "$dir/coord.log" "serving jobs" "${pids[0]}"
  for n in 0 1; do
    "$ferry" agent --kafka "$kafka" --node "n$n" --home "$dir/n$n" --heartbeat 1s > "$dir/agent$n.log" 2>&1 &
    pids+=($!)
    await_line "$dir/agent$n.log" "^ferry agent n$n" "${pids[-1]}"
  done
  local agent0="${pids[1]}"
  "$ferry" run --kafka "$kafka" --job "$name" --ranks 2 --nodes n0,n1 --interval 0 --capture "$capture" \
    --auto-recover --partner --halt-grace 0 --store "$dir/store" --http off \
    -- bash -c 'exec python3 "$0" "$1" 300 5 3 "$2.$FERRY_RANK"' "$state" "$mib" "$dir/ready" > "$dir/run.log" 2>&1 &
  local pid=$!
  await_ready "$dir/ready" 2 "$pid"
  for round in $(seq 1 "${ROUNDS:-2}"); do
    local copies
    copies="$(grep -cE "n0's images of ranks? 0 copied into n1's cache" "$dir/run.log" || true)"
    "$ferry" checkpoint "$name" --kafka "$kafka" > /dev/null
    while [ "$(grep -cE "n0's images of ranks? 0 copied into n1's cache" "$dir/run.log" || true)" -le "$copies" ]; do
      kill -0 "$pid" 2> /dev/null || { echo "run-transparent.sh: ferry run of $name ended:" >&2; tail -30 "$dir/run.log" >&2; exit 1; }
      sleep 0.2
    done
    sleep 2
    rm -rf "$dir/n0/cache/$name"/[0-9]*
    local victim before
    victim="$(rank_pid "$dir" "$agent0")"
    before="$(grep -cE "restored generation .*0=partner" "$dir/run.log" || true)"
    restart_cmd="" kill_and_time "$dir" "$victim" "$dir/agent0.log"
    [ "$(grep -cE "restored generation .*0=partner" "$dir/run.log" || true)" -gt "$before" ] \
      || { echo "run-transparent.sh: $name: rank 0 was not restored from the partner copy:" >&2; tail -30 "$dir/run.log" >&2; exit 1; }
    sleep 3
  done
  kill -TERM "$pid"
  wait "$pid" || true
  kill -TERM "${pids[@]}"
  wait || true
}

IFS=, read -r -a mibs <<< "$sizes"
if [[ $parts == *,1,* ]]; then
  for mib in "${mibs[@]}"; do
    echo "== stall, one rank of $mib MiB"
    dmtcp "stall-$mib-gzip" "$mib" 1
    dmtcp "stall-$mib-nogzip" "$mib" 1 --no-gzip
    ferry_job "stall-$mib-dmtcp" dmtcp "$mib" 1
    ferry_job "stall-$mib-criu" criu "$mib" 1
  done
fi
if [[ $parts == *,2,* ]]; then
  echo "== bytes per generation, $ranks ranks of 32 MiB"
  dmtcp "bytes-gzip" 32 "$ranks"
  dmtcp "bytes-nogzip" 32 "$ranks" --no-gzip
  ferry_job "bytes-dmtcp" dmtcp 32 "$ranks"
fi
if [[ $parts == *,3,* ]]; then
  echo "== restart, one rank of ${mibs[0]} MiB"
  restart_dmtcp "restart-gzip" "${mibs[0]}"
  restart_dmtcp "restart-nogzip" "${mibs[0]}" --no-gzip
  for capture in dmtcp criu; do
    restart_ferry "restart-$capture-local" "$capture" "${mibs[0]}" local
    restart_ferry "restart-$capture-remote" "$capture" "${mibs[0]}" remote
  done
fi
if [[ $parts == *,4,* ]]; then
  echo "== restart from a partner's copy, two nodes on loopback, ranks of ${mibs[0]} MiB"
  for capture in dmtcp criu; do
    restart_partner "restart-$capture-partner" "$capture" "${mibs[0]}"
  done
fi
echo "uptime: $(uptime)"

python3 - "$work" "$sizes" "$ranks" "$parts" <<'PY'
import glob, json, re, statistics, sys
work, sizes, ranks, parts = sys.argv[1], [int(s) for s in sys.argv[2].split(",")], int(sys.argv[3]), sys.argv[4]
MiB = 2 ** 20
med = statistics.median


def pauses(paths):
    return [float(m.group(1)) for p in paths for m in re.finditer(r"^pause ([0-9.]+)$", open(p).read(), re.M)]


def dmtcp(name):
    rows = [line.split() for line in open(f"{work}/{name}/checkpoints")]
    return {"stall": [float(r[1]) for r in rows], "bytes": [int(r[2]) for r in rows], "zstd": [int(r[3]) for r in rows],
            "pauses": pauses(glob.glob(f"{work}/{name}/out.*"))}


def ferry(name):
    first = int(open(f"{work}/{name}/first").read())
    gens = [g for g in json.load(open(f"{work}/{name}/list.json"))["generations"] if g["state"] == "ESTABLISHED"]
    counted = [g for g in gens if g["generation"] >= first]
    growth = {}
    prev = 0
    for line in open(f"{work}/{name}/store-growth"):
        g, b = map(int, line.split())
        if True:
            growth[g] = b - prev
        prev = b
    return {"gens": gens, "counted": counted, "first": first, "growth": growth,
            "stall": [g["maxStallSeconds"] for g in counted], "est": [g["secondsToEstablished"] for g in counted],
            "raw": [g["rawBytes"] for g in counted], "pauses": pauses([f"{work}/{name}/run.log"])}


def span(xs):
    return f"{med(xs):.2f} s ({min(xs):.2f}-{max(xs):.2f})" if xs else "-"


def stall_table():
    print("\nStall per checkpoint, one rank (medians, range in brackets; pauses: what the program saw):\n")
    print("| state | checkpoint | image per checkpoint | stall | program's pause | request to established | DMTCP gzip stall / this stall |")
    print("|---:|---|---:|---|---|---|---:|")
    for mib in sizes:
        gz, raw = dmtcp(f"stall-{mib}-gzip"), dmtcp(f"stall-{mib}-nogzip")
        base = med(gz["stall"])
        for label, d in (("`dmtcp_launch` (gzip -1), `--bcheckpoint`", gz), ("`dmtcp_launch --no-gzip`, `--bcheckpoint`", raw)):
            print(f"| {mib} MiB | {label} | {med(d['bytes']) / MiB:.1f} MiB written | {span(d['stall'])} | {span(d['pauses'])} "
                  f"| {span(d['stall'])} (local, fsynced) | {base / med(d['stall']):.2f}x |")
        for capture in ("dmtcp", "criu"):
            f = ferry(f"stall-{mib}-{capture}")
            if not f["counted"]:
                print(f"| {mib} MiB | Ferry `--capture {capture}` | no generation counted | | | | |")
                continue
            print(f"| {mib} MiB | Ferry `--capture {capture}` ({len(f['counted'])} generations) | {med(f['raw']) / MiB:.1f} MiB raw, "
                  f"{med([g['storedBytes'] for g in f['counted']]) / MiB:.1f} MiB stored | {span(f['stall'])} | {span(f['pauses'])} "
                  f"| {span(f['est'])} (remote store) | **{base / med(f['stall']):.1f}x** |")


def bytes_table():
    print(f"\nBytes per generation, {ranks} ranks of 32 MiB, 5% of the state rewritten between generations:\n")
    gz, raw, f = dmtcp("bytes-gzip"), dmtcp("bytes-nogzip"), ferry("bytes-dmtcp")
    cell = lambda xs: f"{med(xs) / MiB:.1f} MiB ({min(xs) / MiB:.1f}-{max(xs) / MiB:.1f})"
    print(f"DMTCP, {len(gz['bytes'])} checkpoints each (median, range): raw (`--no-gzip`) {cell(raw['bytes'])}; "
          f"gzip -1 (`dmtcp_launch`'s default) {cell(gz['bytes'])}; `zstd -1` of each raw image {cell(raw['zstd'])}.\n")
    print("| Ferry `--capture dmtcp` generation | raw | stored (`ferry list`) | store directory growth |")
    print("|---|---:|---:|---:|")
    for g in f["gens"]:
        n = g["generation"]
        note = (" (state being filled)" if n < f["first"] else " (first after the fill)" if n == f["first"] else "")
        growth = f"{f['growth'][n] / MiB:.1f} MiB" if n in f["growth"] else "-"
        print(f"| {n}{note} | {g['rawBytes'] / MiB:.1f} MiB | {g['storedBytes'] / MiB:.1f} MiB | {growth} |")
    later = f["counted"][1:]  # the first counted generation follows one whose state may be half filled
    gzb = med(gz["bytes"])
    stored = [g["storedBytes"] for g in later]
    upto = sum(g["storedBytes"] for g in f["gens"] if g["generation"] <= f["first"])
    if stored:
        print(f"\nGenerations {later[0]['generation']}-{later[-1]['generation']}: Ferry stores a median {med(stored) / MiB:.1f} MiB "
              f"({min(stored) / MiB:.1f}-{max(stored) / MiB:.1f}) per generation, DMTCP gzip {gzb / MiB:.1f} MiB: "
              f"**{gzb / med(stored):.1f}x** less (goal: 5x); zstd -1 of the raw images {med(raw['zstd']) / MiB:.1f} MiB "
              f"({med(raw['zstd']) / med(stored):.1f}x Ferry's). Up to the first generation after the fill Ferry stored "
              f"{upto / MiB:.1f} MiB in all.")
    print(f"{ranks} ranks: Ferry request to established {span(f['est'])}, longest rank stall {span(f['stall'])} "
          f"(generations {f['first']}-{f['gens'][-1]['generation'] if f['gens'] else '-'}); "
          f"DMTCP gzip `--bcheckpoint` {span(gz['stall'])}, `--no-gzip` {span(raw['stall'])}.")


def restart_table():
    print(f"\nRestart, SIGKILL to the program's first step, one rank of {sizes[0]} MiB (median, range):\n")
    print("| restart | rounds | kill to resumed |")
    print("|---|---:|---|")
    for name, label in (("restart-gzip", "`dmtcp_restart` of gzip images, local disk, started at the kill"),
                        ("restart-nogzip", "`dmtcp_restart` of `--no-gzip` images, local disk, started at the kill"),
                        ("restart-dmtcp-local", "Ferry `--capture dmtcp --auto-recover`, local cache"),
                        ("restart-dmtcp-remote", "Ferry `--capture dmtcp --auto-recover`, store (cache emptied)"),
                        ("restart-criu-local", "Ferry `--capture criu --auto-recover`, local cache"),
                        ("restart-criu-remote", "Ferry `--capture criu --auto-recover`, store (cache emptied)"),
                        ("restart-dmtcp-partner", "Ferry `--capture dmtcp`, 2 nodes on loopback, partner's copy"),
                        ("restart-criu-partner", "Ferry `--capture criu`, 2 nodes on loopback, partner's copy")):
        try:
            xs = [float(x) for x in open(f"{work}/{name}/restart")]
        except OSError:
            xs = []
        print(f"| {label} | {len(xs)} | {span(xs)} |")


if ",1," in parts:
    stall_table()
if ",2," in parts:
    bytes_table()
if ",3," in parts or ",4," in parts:
    restart_table()
PY
