#!/usr/bin/env python3
"""A training loop made checkpointable under Ferry: a linear model fitted by SGD with momentum.

    ferry run --job train --ranks 2 --interval 30s --auto-recover -- python3 train.py STEPS OUT_DIR

Each rank fits y = 3x + 2 on its own deterministic stream of noisy samples (seeded by its rank
and step, so a resumed run sees exactly the samples an uninterrupted one would), saves model,
optimizer state and step when Ferry asks, resumes from FERRY_RESTART_DIR after a failure, and
writes its final weights to OUT_DIR/rank-R. Run without Ferry, it simply trains (OUT_DIR/rank-0).

State files: with NumPy installed, ``state.npz`` (np.savez of the weight and momentum arrays);
without it, ``state.json``. A PyTorch program saves ``model.state_dict()`` and
``optimizer.state_dict()`` with ``torch.save(..., directory / "state.pt")`` in the handler and
loads them with ``torch.load`` from ``ferry.restart_dir`` the same way.
"""
import json
import os
import pathlib
import random
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))  # the client, when not installed
from ferry_checkpoint import FerryCheckpoint  # noqa: E402

try:
    import numpy as np
except ImportError:
    np = None

LEARNING_RATE = 0.01
MOMENTUM = 0.9


def save(state, directory):
    if np is not None:
        np.savez(directory / "state.npz", weights=np.array(state["weights"]), velocity=np.array(state["velocity"]),
                 step=np.array(state["step"]))
    else:
        (directory / "state.json").write_text(json.dumps(state))  # floats round-trip exactly (repr)


def load(directory):
    if (directory / "state.npz").exists():
        z = np.load(directory / "state.npz")
        return {"weights": [float(v) for v in z["weights"]], "velocity": [float(v) for v in z["velocity"]],
                "step": int(z["step"])}
    return json.loads((directory / "state.json").read_text())


def train_step(state, rank):
    rnd = random.Random(rank * 1_000_003 + state["step"])  # this step's samples, whoever runs it
    w, b = state["weights"]
    gw = gb = 0.0
    for _ in range(32):
        x = rnd.uniform(-1, 1)
        y = 3 * x + 2 + rnd.gauss(0, 0.1)
        err = w * x + b - y
        gw += err * x / 32
        gb += err / 32
    vw, vb = state["velocity"]
    vw = MOMENTUM * vw - LEARNING_RATE * gw
    vb = MOMENTUM * vb - LEARNING_RATE * gb
    state["weights"] = [w + vw, b + vb]
    state["velocity"] = [vw, vb]
    state["step"] += 1


def main():
    steps, out = int(sys.argv[1]), pathlib.Path(sys.argv[2])
    delay = float(os.environ.get("TRAIN_STEP_SECONDS", "0"))
    ferry = FerryCheckpoint()
    rank = int(os.environ.get("FERRY_RANK", "0"))  # set by Ferry; by hand, to train as another rank would
    state = {"weights": [0.0, 0.0], "velocity": [0.0, 0.0], "step": 0}
    if ferry.restart_dir is not None:
        state = load(ferry.restart_dir)
        print("rank %d resumes at step %d from generation %d" % (rank, state["step"], ferry.restart_generation),
              flush=True)
    ferry.connect()
    ferry.complete_restart(True)
    (out / ("pid-%d" % rank)).write_text(str(os.getpid()))
    while state["step"] < steps:
        train_step(state, rank)
        ferry.poll(lambda directory, generation: save(state, directory))  # a safe point: state is consistent
        if delay:
            time.sleep(delay)
    (out / ("rank-%d" % rank)).write_text(repr(state["weights"]) + "\n")


if __name__ == "__main__":
    main()
