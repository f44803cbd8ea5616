#!/usr/bin/env bash
# Transparent checkpoints (issue 37): Ferry's `--capture dmtcp` and `--capture criu` beside what a
# user would run instead, plain `dmtcp_launch` (gzip -1, DMTCP's default) or `dmtcp_launch --no-gzip`
# with `dmtcp_command --bcheckpoint`, in one run, on one program (benchmarks/transparent-state.py:
# Python holding MIB MiB of random doubles, 5% of them rewritten every 3 s in scattered 256 KiB runs).
#   benchmarks/run-transparent.sh [SIZES_MIB] [WORK_DIR] [GENERATIONS]   (default: 32,256, bench-work/transparent, 4)
# 1. Stall per checkpoint and time to established, one rank of each size: DMTCP's stall is the
#    wall time of `dmtcp_command --bcheckpoint` (its images are fsynced when it returns); Ferry's is
#    what Ferry reports (`ferry list --json`: the longest rank stall, and seconds from request to
#    established on the store). Beside both, the pause the program itself saw. Generations captured
#    before the state was filled are not counted.
# 2. Bytes stored per generation, 4 ranks of 32 MiB: Ferry's stored bytes (as it reports them, and
#    the store directory's growth) against DMTCP's gzip images and `zstd -1` of DMTCP's raw images.
# Needs DMTCP and CRIU on PATH (/opt/ckpt-tools/bin is added), zstd, root (CRIU). Environment: RANKS (4).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sizes="${1:-32,256}"
work="${2:-$here/bench-work/transparent}"
gens="${3:-4}"
ranks="${RANKS:-4}"
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

IFS=, read -r -a mibs <<< "$sizes"
for mib in "${mibs[@]}"; do
  echo "== stall, one rank of $mib MiB"
  dmtcp "stall-$mib-gzip" "$mib" 1
  dmtcp "stall-$mib-nogzip" "$mib" 1 --no-gzip
  ferry_job "stall-$mib-dmtcp" dmtcp "$mib" 1
  ferry_job "stall-$mib-criu" criu "$mib" 1
done
echo "== bytes per generation, $ranks ranks of 32 MiB"
dmtcp "bytes-gzip" 32 "$ranks"
dmtcp "bytes-nogzip" 32 "$ranks" --no-gzip
ferry_job "bytes-dmtcp" dmtcp 32 "$ranks"
echo "uptime: $(uptime)"

python3 - "$work" "$sizes" "$ranks" <<'PY'
import glob, json, re, statistics, sys
work, sizes, ranks = sys.argv[1], [int(s) for s in sys.argv[2].split(",")], int(sys.argv[3])
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


print(f"\nStall per checkpoint, one rank (medians, range in brackets; pauses: what the program saw):\n")
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

print(f"\nBytes per generation, {ranks} ranks of 32 MiB, 5% of the state rewritten between generations:\n")
gz, raw, f = dmtcp("bytes-gzip"), dmtcp("bytes-nogzip"), ferry("bytes-dmtcp")
first_gen = f["gens"][0] if f["gens"] else None
later = f["counted"][1:]  # the first counted generation follows one whose state may be half filled


def row(label, first, rest):
    cell = lambda xs: f"{med(xs) / MiB:.1f} MiB ({min(xs) / MiB:.1f}-{max(xs) / MiB:.1f})" if xs else "-"
    print(f"| {label} | {first / MiB:.1f} MiB | {cell(rest)} |")


print("| per generation | first | later: median (range) |")
print("|---|---:|---:|")
row("DMTCP raw (`--no-gzip`)", raw["bytes"][0], raw["bytes"][1:])
row("DMTCP gzip -1 (`dmtcp_launch` default)", gz["bytes"][0], gz["bytes"][1:])
row("`zstd -1` of each DMTCP raw image", raw["zstd"][0], raw["zstd"][1:])
if first_gen:
    row("Ferry `--capture dmtcp`: raw", first_gen["rawBytes"], [g["rawBytes"] for g in later])
    row("Ferry: stored (`ferry list`)", first_gen["storedBytes"], [g["storedBytes"] for g in later])
    row("Ferry: store directory growth", f["growth"].get(0, 0), [f["growth"][g["generation"]] for g in later if g["generation"] in f["growth"]])
gzb = med(gz["bytes"][1:] or gz["bytes"])
later = [g["storedBytes"] for g in later]
if later:
    print(f"\nGenerations {', '.join(str(g['generation']) for g in f['counted'][1:])} of Ferry counted as later. After the first: Ferry stores a median {med(later) / MiB:.1f} MiB per generation, "
          f"DMTCP gzip {gzb / MiB:.1f} MiB ({gzb / med(later):.1f}x more), zstd -1 of the raw images "
          f"{med(raw['zstd']) / MiB:.1f} MiB ({med(raw['zstd']) / med(later):.1f}x more). Goal: at most a fifth of gzip's.")
print(f"{ranks} ranks: Ferry request to established {span(f['est'])}, longest rank stall {span(f['stall'])}; "
      f"DMTCP gzip --bcheckpoint {span(gz['stall'])}, --no-gzip {span(raw['stall'])}.")
PY
