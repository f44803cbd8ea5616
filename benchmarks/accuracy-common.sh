# Sourced by the accuracy scripts (needs $here, $home, $work).
# established JOB: the job's newest established generation, or -1.
established() {
  "$here/bin/ferry" status "$1" --json --home "$home" 2>/dev/null \
    | python3 -c 'import json,sys; print(json.load(sys.stdin).get("newestEstablished", -1))' 2>/dev/null || echo -1
}
# finish_job JOB PID N STOP_FILE: waits until generation N-1 of JOB is established (its
# `ferry run` is PID, its output $work/JOB.log), then lets the ranks end and waits for the run.
finish_job() {
  local job="$1" pid="$2" n="$3" stop="$4"
  while [ "$(established "$job")" -lt $((n - 1)) ]; do
    if ! kill -0 "$pid" 2>/dev/null; then echo "ferry run of $job ended early:"; cat "$work/$job.log"; exit 1; fi
    sleep 5
  done
  touch "$stop"
  wait "$pid"
}
