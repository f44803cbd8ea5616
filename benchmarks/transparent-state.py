#!/usr/bin/env python3
"""A rank that knows nothing of Ferry, for benchmarks/run-transparent.sh.

    transparent-state.py MIB SECONDS [CHANGE_PCT PERIOD] [READY_FILE]

It holds MIB MiB of random doubles (uniform in [1, 2): 52 random bits of 64, as random.random()
gives) and, every 0.1 s, rewrites some of them in scattered 256 KiB runs, so that CHANGE_PCT
percent of its state changes every PERIOD seconds (the staging benchmarks' "5% in scattered
256 KiB runs"), for SECONDS seconds after its state is filled; then it exits 0.

Once its state is filled it creates READY_FILE.PID (if given: ranks may share a name). It prints
"step N" once a second, so that whoever reads its output sees when it runs again after a
restore, and "pause S" whenever two steps lie more than 0.15 s apart (S: the gap less the
0.1 s step): the stall as the program itself saw it, whoever froze it. Time is counted in
steps, not by the clock, so a restored process does the work it had left.
"""
import array
import os
import random
import sys
import time

mib = int(sys.argv[1])
seconds = float(sys.argv[2])
change_pct = float(sys.argv[3]) if len(sys.argv) > 3 else 5.0
period = float(sys.argv[4]) if len(sys.argv) > 4 else 3.0
ready = sys.argv[5] if len(sys.argv) > 5 else ""

RUN = 256 * 1024 // 8  # doubles in one rewritten run
STEP = 0.1
# Each double's sign and exponent set to 1.0's, its mantissa random, built from bytes by C loops
# (bytes.translate): a Python loop over 32 million random() calls takes half a minute here.
HIGH_NIBBLE = bytes(b | 0xF0 for b in range(256))


def doubles(count):
    raw = bytearray(os.urandom(8 * count))
    raw[7::8] = b"\x3f" * count
    raw[6::8] = bytes(raw[6::8]).translate(HIGH_NIBBLE)
    out = array.array("d")
    out.frombytes(raw)
    return out


state = array.array("d")
for _ in range(mib):  # 1 MiB at a time
    state.extend(doubles(4 * RUN))
rnd = random.Random(os.getpid())
runs = len(state) // RUN
if ready:
    open(f"{ready}.{os.getpid()}", "w").close()
# Runs to rewrite per step, carried as a fraction so that small states still change on average.
per_step = runs * change_pct / 100.0 * STEP / period
owed = 0.0
steps = int(seconds / STEP)
last = time.time()
for step in range(steps):
    now = time.time()
    if now - last > 0.15:
        print(f"pause {now - last - STEP:.3f}", flush=True)
    last = now
    owed += per_step
    while owed >= 1.0:
        owed -= 1.0
        at = rnd.randrange(runs) * RUN
        state[at:at + RUN] = doubles(RUN)
    if step % 10 == 0:
        print(f"step {step // 10}", flush=True)
    time.sleep(STEP)
print("done", flush=True)
