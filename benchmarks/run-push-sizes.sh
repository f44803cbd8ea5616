#!/usr/bin/env bash
# The time from capture to established against a snapshot's size, on one node: a real job (RANKS bash
# ranks in signal mode, a checkpoint every 6 s) whose ranks write incompressible images of the sizes
# given, one size a generation in turn; then each snapshot's seconds after its capture (from `ferry
# plan --accuracy --json`: actual less captured), by size, beside one straight line fitted to them all.
# Answers whether the agent's push grows in proportion to the bytes (the forecasts fit a line). Then
# where each snapshot's time after capture went, from the job's events (logged at DEBUG): the set-up
# (capture to the agent's first staging report), the reading (first to last report: the push's
# hashing, compressing and writing) and the finish (last report to established: the commit).
# WORK_DIR on a tmpfs (/dev/shm/...) puts the node cache and the store there: the disk left out.
#   benchmarks/run-push-sizes.sh [WORK_DIR] [RANKS] ["MiB a rank, one per generation in turn"] [GENERATIONS]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${1:-$here/bench-work/push-sizes}"
ranks="${2:-4}"
sizes="${3:-16 30 42 50 62}"
n="${4:-17}"
case "$ranks$n" in *[!0-9]*) echo "RANKS and GENERATIONS are whole numbers" >&2; exit 2 ;; esac
for s in $sizes; do
  case "$s" in ''|*[!0-9]*) echo "sizes are whole MiB a rank, got '$s'" >&2; exit 2 ;; esac
done
rm -rf "$work"
mkdir -p "$work"
home="$work/home"
. "$here/benchmarks/accuracy-common.sh"
job=sizes
stop="$work/stop"
rank="sizes=($sizes); trap 'g=\$(cat \"\$FERRY_CKPT_DIR/REQUEST\"); d=\"\$FERRY_CKPT_DIR/\$g\";"
rank+=" head -c \${sizes[\$(( g % \${#sizes[@]} ))]}M /dev/urandom > \"\$d/memory\"; : > \"\$d/DONE\"' USR2;"
rank+=" while [ ! -f '$stop' ]; do sleep 0.2; done"
"$here/bin/ferry" run --job "$job" --ranks "$ranks" --interval 6s --home "$home" --store "$work/store" \
  --log-level io.ferry.events=debug -- bash -c "$rank" > "$work/$job.log" 2>&1 &
finish_job "$job" $! "$n" "$stop"
"$here/bin/ferry" plan --accuracy "$job" --json --home "$home" > "$work/$job.json"
python3 - "$work/$job.json" <<'PY'
import collections, json, sys
rows = json.load(open(sys.argv[1]))["rows"]
pts = [(r["rawBytes"] / 2**20, r["actualSeconds"] - r["capturedSeconds"]) for r in rows if r.get("capturedSeconds", -1) >= 0]
if len(pts) < 3:
    sys.exit(f"only {len(pts)} snapshots with a capture time: nothing to fit")
mx = sum(x for x, _ in pts) / len(pts)
my = sum(y for _, y in pts) / len(pts)
sxx = sum((x - mx) ** 2 for x, _ in pts)
b = sum((x - mx) * (y - my) for x, y in pts) / sxx if sxx > 0 else 0.0
a = my - b * mx
print(f"{len(pts)} snapshots; one line: {a:.3f} s + {1000 * b:.2f} ms a MiB")
print("| raw MiB | snapshots | median s after capture | the line's s | median less line | all |")
print("|---:|---:|---:|---:|---:|---|")
by = collections.defaultdict(list)
for x, y in pts:
    by[round(x)].append(y)
for x in sorted(by):
    v = sorted(by[x])
    med = v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2
    print(f"| {x} | {len(v)} | {med:.2f} | {a + b * x:.2f} | {med - a - b * x:+.2f} | {', '.join(f'{t:.2f}' for t in v)} |")
PY
python3 - "$work/$job.log" "$job" <<'PY'
import datetime, re, statistics, sys
ev = {}
for line in open(sys.argv[1]):
    m = re.search(r"(\d{4}-\d\d-\d\dT[\d:.]+Z) \w+\s+i\.f\.events job=" + re.escape(sys.argv[2]) + r" generation=(\d+)(.*)", line)
    if not m:
        continue
    t = datetime.datetime.fromisoformat(m[1].replace("Z", "+00:00")).timestamp()
    e = ev.setdefault(int(m[2]), {})
    what = m[3]
    if "image captured" in what:
        e["captured"] = max(e.get("captured", 0), t)
    elif "staging: 0 B of" in what:
        e["first"] = t
    elif "staging:" in what:
        e["last"] = t
    elif "established" in what:
        e["established"] = t
parts = {"set-up": [], "reading": [], "finish": [], "after capture": []}
for g, e in sorted(ev.items()):
    if g < 2 or not all(k in e for k in ("captured", "first", "last", "established")):
        continue
    parts["set-up"].append(e["first"] - e["captured"])
    parts["reading"].append(e["last"] - e["first"])
    parts["finish"].append(e["established"] - e["last"])
    parts["after capture"].append(e["established"] - e["captured"])
print()
print("| part (generations 2 on) | median s | least | most | standard deviation |")
print("|---|---:|---:|---:|---:|")
for name, v in parts.items():
    if v:
        print(f"| {name} | {statistics.median(v):.2f} | {min(v):.2f} | {max(v):.2f} | {statistics.pstdev(v):.3f} |")
PY
