#!/usr/bin/env bash
# Times a `ferry coordinator` (embedded broker) SIGKILLed during a job and started again over
# the same home, as systemd would: benchmarks/run-coordinator-restart.sh [KILLS] [WORK_DIR]
# (default 5 kills, a temp dir). A one-node job (an agent, 2 signal-mode ranks, a checkpoint a
# second) runs throughout. For each kill it prints how long the new coordinator took to serve
# ("serving jobs" on its stdout, from its start) and how long from the kill until the job's next
# snapshot was established; beside them, the coordinator's first (cold) start on an empty home.
# The coordinators run with --takeover-after 40s: a restart that waited for its dead self to
# leave the group would show 40 s or more. Uses bin/ferry (built on first use).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
kills=${1:-5}
work=${2:-$(mktemp -d -t ferry-coord-restart.XXXXXX)}
ferry="$here/bin/ferry"
rm -rf "$work"; mkdir -p "$work/results"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
kafka="127.0.0.1:$port"
now() { date +%s.%N; }
coordinator=""
cleanup() {
  pkill -f -- "--home $work/" 2>/dev/null || true
  pkill -f -- "--job restart-bench" 2>/dev/null || true
}
trap cleanup EXIT
served=""
start_coordinator() { # $1: log name; sets $coordinator (its pid) and $served (seconds until it serves)
  local t0; t0=$(now)
  "$ferry" coordinator --home "$work/service" --listen "$kafka" --http off --takeover-after 40s \
    --heartbeat-timeout 30s >"$work/$1.log" 2>&1 &
  coordinator=$!
  until grep -q "serving jobs" "$work/$1.log"; do
    kill -0 "$coordinator" 2>/dev/null || { echo "the coordinator died: $work/$1.log" >&2; exit 1; }
    sleep 0.05
  done
  served=$(echo "$(now) - $t0" | bc)
}
"$ferry" --version >/dev/null 2>&1 || true # builds on first use, outside the timings
echo "uptime: $(uptime)"
start_coordinator c0
echo "cold start on an empty home: $served s"
"$ferry" agent --kafka "$kafka" --node n0 --home "$work/n0" --heartbeat 1s --peer-listen off >"$work/agent.log" 2>&1 &
until grep -q "ferry agent n0" "$work/agent.log"; do sleep 0.1; done
cat >"$work/rank.sh" <<'EOF'
#!/usr/bin/env bash
trap 'g=$(cat "$FERRY_CKPT_DIR/REQUEST"); echo "$x $step" > "$FERRY_CKPT_DIR/$g/state"; : > "$FERRY_CKPT_DIR/$g/DONE"' USR2
x=$((FERRY_RANK + 1)); step=0
if [ -n "${FERRY_RESTART_DIR:-}" ]; then read -r x step < "$FERRY_RESTART_DIR/state"; fi
while :; do (( x = (x * 1103515245 + 12345) % 2147483648, step++ )); sleep 0.02; done
EOF
chmod +x "$work/rank.sh"
"$ferry" run --kafka "$kafka" --job restart-bench --ranks 2 --nodes n0 --interval 1s --auto-recover \
  --store "$work/store" -- "$work/rank.sh" >"$work/run.log" 2>&1 &
until grep -q "established" "$work/run.log"; do sleep 0.1; done
printf '%-8s %-22s %-30s\n' kill "serves again after (s)" "next snapshot established (s)"
for i in $(seq 1 "$kills"); do
  sleep 3
  before=$(grep -c "established" "$work/run.log")
  kill -9 "$coordinator"; killed=$(now)
  wait "$coordinator" 2>/dev/null || true
  start_coordinator "c$i"
  until [ "$(grep -c "established" "$work/run.log")" -gt "$before" ]; do sleep 0.05; done
  printf '%-8s %-22.2f %-30.2f\n' "$i" "$served" "$(echo "$(now) - $killed" | bc)"
done
