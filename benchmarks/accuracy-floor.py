#!/usr/bin/env python3
"""How near a forecast at 25% read can come on a recorded accuracy run.

For each snapshot of JOB (from generation 3 on) in a run's `kafka` directory (an embedded broker's log,
as `benchmarks/run-accuracy*.sh` leave it under the run's home), reads from the event log the request,
the last capture, the first staging report past 25% of the bytes read, and the establishment; fits one
line in the raw and the written bytes to the seconds from that mark to established, in hindsight to all
snapshots at once (each weighted by its whole time squared, as the forecasts are judged); and prints the
median of what the line leaves, as a share of each snapshot's whole time. A forecast from history is made
before the snapshot and cannot know its scatter: this is about as near as one can come with those terms.

Usage: benchmarks/accuracy-floor.py KAFKA_DIR:JOB [KAFKA_DIR:JOB ...]
Reads uncompressed record batches only (the embedded broker writes them so); needs numpy.
"""
import glob
import json
import struct
import sys

import numpy as np


def _varint(b, i):
    shift = result = 0
    while True:
        x = b[i]
        i += 1
        result |= (x & 0x7F) << shift
        if not x & 0x80:
            break
        shift += 7
    return (result >> 1) ^ -(result & 1), i


def records(path):
    """(timestamp ms, value bytes) of every record of a Kafka log segment (record batch format v2)."""
    b = open(path, 'rb').read()
    i = 0
    while i + 61 <= len(b):
        length = struct.unpack('>i', b[i + 8:i + 12])[0]
        if length <= 0:
            break
        attributes = struct.unpack('>h', b[i + 21:i + 23])[0]
        base_time = struct.unpack('>q', b[i + 27:i + 35])[0]
        count = struct.unpack('>i', b[i + 57:i + 61])[0]
        if attributes & 7:
            sys.exit(f'{path}: a compressed record batch; this reader takes uncompressed ones only')
        j = i + 61
        for _ in range(count):
            size, j = _varint(b, j)
            start = j
            j += 1  # the record's attributes
            time_delta, j = _varint(b, j)
            _, j = _varint(b, j)  # offset delta
            key_len, j = _varint(b, j)
            j += max(key_len, 0)
            value_len, j = _varint(b, j)
            value = b[j:j + value_len] if value_len > 0 else b''
            j = start + size
            yield base_time + time_delta, value
        i += 12 + length


def generations(kafka_dir, job):
    events = []
    for segment in glob.glob(f'{kafka_dir}/ferry.*/*.log'):
        for ts, value in records(segment):
            try:
                e = json.loads(value)
            except ValueError:
                continue
            if isinstance(e, dict) and e.get('job') == job:
                events.append((ts, e))
    events.sort(key=lambda x: x[0])
    gens = {}
    for ts, e in events:
        g = e.get('generation')
        if g is None:
            continue
        x = gens.setdefault(g, {'captured': 0, 'raw': 0, 'written': 0})
        t = e.get('type')
        if t == 'CheckpointRequested':
            x['requested'] = ts
        elif t == 'ImageCaptured':
            x['captured'] = max(x['captured'], ts)
            x['raw'] += e['bytes']
        elif t == 'ImageStaged':
            x['written'] += e.get('storedBytes', 0)
        elif (t == 'StagingProgress' and 'mark' not in x and e['totalBytes'] > 0
              and e['readBytes'] >= 0.25 * e['totalBytes']):
            x['mark'] = ts
        elif t == 'SnapshotEstablished':
            x['established'] = ts
    return gens


def main(args):
    if not args:
        sys.exit(__doc__)
    medians = []
    for arg in args:
        kafka_dir, _, job = arg.rpartition(':')
        gens = generations(kafka_dir, job)
        rows = [(x['raw'], x['written'], (x['established'] - x['mark']) / 1e3,
                 (x['established'] - x['requested']) / 1e3)
                for g, x in sorted(gens.items())
                if g >= 3 and all(k in x for k in ('requested', 'mark', 'established'))]
        if len(rows) < 4:
            print(f'{arg}: {len(rows)} snapshots with a 25% mark, too few')
            continue
        a = np.array(rows, float)
        x = np.c_[np.ones(len(a)), a[:, 0], a[:, 1]]
        root_w = 1 / a[:, 3]
        coef = np.linalg.lstsq(x * root_w[:, None], a[:, 2] * root_w, rcond=None)[0]
        left = np.abs(a[:, 2] - x @ coef) / a[:, 3] * 100
        medians.append(np.median(left))
        print(f'{arg}: {len(a)} snapshots of {a[:, 3].min():.1f} to {a[:, 3].max():.1f} s; '
              f'a line in hindsight leaves a median {np.median(left):.1f}% at 25% read')
    if medians:
        print(f'mean of the medians: {np.mean(medians):.2f}%')


if __name__ == '__main__':
    main(sys.argv[1:])
