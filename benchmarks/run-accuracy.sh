#!/usr/bin/env bash
# Forecast accuracy on this machine: two real jobs (2 and 4 ranks, bash ranks in signal mode)
# checkpoint every 6 s with images of a different size each time (32..256 MiB per snapshot,
# incompressible), then `ferry plan --accuracy` sets every forecast beside what happened.
# Then the calibrated model across jobs: `ferry plan --calibrate-from acc2` (its snapshots and a
# probe of the store), projected to one node with each of acc4's snapshot sizes, beside what
# acc4's snapshots took and beside the fill-time law.
#   benchmarks/run-accuracy.sh [CHECKPOINTS_PER_JOB] [WORK_DIR]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
n="${1:-13}"
work="${2:-$here/bench-work/accuracy}"
rm -rf "$work"
mkdir -p "$work"
home="$work/home"
. "$here/benchmarks/accuracy-common.sh"
for ranks in 2 4; do
  job="acc$ranks"
  stop="$work/stop-$job"
  # Generation g writes (8 + 37 g mod 57) x 4 MiB in all, split over the ranks.
  rank="trap 'g=\$(cat \"\$FERRY_CKPT_DIR/REQUEST\"); d=\"\$FERRY_CKPT_DIR/\$g\";"
  rank+=" head -c \$(( (8 + (g * 37) % 57) * 4 / $ranks ))M /dev/urandom > \"\$d/memory\"; : > \"\$d/DONE\"' USR2;"
  rank+=" while [ ! -f '$stop' ]; do sleep 0.2; done"
  "$here/bin/ferry" run --job "$job" --ranks "$ranks" --interval 6s --home "$home" -- bash -c "$rank" \
    > "$work/$job.log" 2>&1 &
  finish_job "$job" $! "$n" "$stop"
  "$here/bin/ferry" plan --accuracy "$job" --home "$home"
  echo
done

"$here/bin/ferry" plan --calibrate-from acc2 --home "$home" --save-calibration "$work/acc2.json" > "$work/calibration.txt"
cat "$work/calibration.txt"
"$here/bin/ferry" plan --accuracy acc4 --json --home "$home" > "$work/acc4.json"
python3 - "$here/bin/ferry" "$work" <<'PY'
import json, subprocess, sys
ferry, work = sys.argv[1], sys.argv[2]
rows = json.load(open(f"{work}/acc4.json"))["rows"]
print("Calibrated from acc2 (2 ranks), projected to acc4's snapshots (4 ranks), one node:")
print("| generation | raw MiB | actual s | calibrated s | error | law's stall (ideal) s | law error |")
print("|---:|---:|---:|---:|---:|---:|---:|")
errs, law = [], []
for r in rows:
    out = subprocess.run([ferry, "plan", "--calibration", f"{work}/acc2.json", "--nodes", "1",
                          "--checkpoint-size", str(r["rawBytes"]), "--json"], capture_output=True, text=True, check=True)
    p = json.loads(out.stdout)
    cal, ideal, act = p["established"]["calibratedSeconds"], p["stall"]["idealSeconds"], r["actualSeconds"]
    errs.append((cal - act) / act); law.append((ideal - act) / act)
    print(f"| {r['generation']} | {r['rawBytes'] / 2**20:.0f} | {act:.2f} | {cal:.2f} | {100 * errs[-1]:+.1f}% | {ideal:.2f} | {100 * law[-1]:+.1f}% |")
med = lambda xs: sorted(abs(x) for x in xs)[len(xs) // 2] if len(xs) % 2 else sum(sorted(abs(x) for x in xs)[len(xs) // 2 - 1:len(xs) // 2 + 1]) / 2
print(f"{len(rows)} snapshots: calibrated median absolute error {100 * med(errs):.1f}%; the fill-time law alone {100 * med(law):.1f}%")
PY
