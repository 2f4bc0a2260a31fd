#!/usr/bin/env python3
"""Writes tests/planner/check/data/torch_snapshot/ (run by hand, not by the test command):

    ~/.cache/spplan/venv/bin/python tests/planner/check/make_snapshot_fixtures.py

These snapshots are SYNTHETIC: dicts written here in the shape torch.cuda.memory._snapshot()
documents at torch 2.15.0 (torch/cuda/memory.py, _snapshot's docstring: Segment, Block, TraceEntry),
pickled as torch.cuda.memory._dump_snapshot does (pickle.dump, the default protocol), and at protocols
2 and 5. No GPU wrote them (there is none here); a real snapshot comes from a GPU lease. The numbers
are chosen so that the test can work them by hand (test_torch_snapshot.cpp says how):
  segments.pickle        two devices, segments and blocks, no trace: device 1 reserves the most;
  traced.pickle          device 0's trace of alloc / free_requested / free_completed / segment_alloc /
                         oom events after memory the ring buffer no longer holds, device 1 untraced;
  traced.p2.pickle, traced.p5.pickle   the same dict at protocols 2 and 5.
"""
import os
import pickle

MiB = 1 << 20
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "torch_snapshot")
BASE = 139_800_000_000_000  # a CUDA address: wider than 32 bits, so pickle writes it as LONG1


def frames():
    return [{"filename": "train.py", "line": 42, "name": "forward"},
            {"filename": "torch/nn/modules/linear.py", "line": 125, "name": "forward"}]


def block(size, state, offset):
    b = {"size": size, "requested_size": size, "address": BASE + offset, "state": state}
    if state != "inactive":
        b["frames"] = frames()
    return b


def segment(device, offset, blocks, segment_type="large"):
    total = sum(size for size, _ in blocks)
    active = sum(size for size, state in blocks if state.startswith("active"))
    allocated = sum(size for size, state in blocks if state == "active_allocated")
    out, at = [], 0
    for size, state in blocks:
        out.append(block(size, state, offset + at))
        at += size
    return {"device": device, "address": BASE + offset, "total_size": total, "allocated_size": allocated,
            "active_size": active, "requested_size": active, "stream": 0, "segment_type": segment_type,
            "segment_pool_id": (0, 0), "is_expandable": False, "frames": frames(), "blocks": out}


def event(action, offset, size, **more):
    e = {"action": action, "addr": BASE + offset, "size": size, "stream": 0, "time_us": 1_700_000_000 + offset,
         "frames": frames()}
    e.update(more)
    return e


def segments_snapshot():
    return {
        "segments": [
            segment(0, 0, [(12 * MiB, "active_allocated"), (2 * MiB, "active_awaiting_free"), (6 * MiB, "inactive")]),
            segment(1, 100 * MiB, [(30 * MiB, "active_allocated"), (2 * MiB, "inactive")]),
            segment(1, 200 * MiB, [(1 * MiB, "active_allocated"), (1 * MiB, "inactive")], "small"),
        ],
        "device_traces": [[], []],
        "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1},
    }


def traced_snapshot():
    trace = [
        event("segment_alloc", 0, 20 * MiB),
        event("alloc", 0, 8 * MiB),
        event("alloc", 8 * MiB, 4 * MiB),
        event("free_requested", 0, 8 * MiB),
        event("free_completed", 0, 8 * MiB),
        event("alloc", 0, 10 * MiB),
        event("segment_alloc", 50 * MiB, 2 * MiB),
        event("alloc", 50 * MiB, 1 * MiB),
        event("free_requested", 0, 10 * MiB),
        event("free_completed", 0, 10 * MiB),
        event("oom", 0, 64 * MiB, device_free=3 * MiB),
    ]
    return {
        "segments": [
            segment(0, 0, [(4 * MiB, "inactive"), (4 * MiB, "active_allocated"), (12 * MiB, "inactive")]),
            segment(0, 50 * MiB, [(1 * MiB, "active_allocated"), (1 * MiB, "inactive")], "small"),
            segment(0, 60 * MiB, [(6 * MiB, "active_allocated")]),  # allocated before the trace's first event
            segment(1, 100 * MiB, [(3 * MiB, "active_allocated"), (7 * MiB, "inactive")]),
        ],
        "device_traces": [trace, []],
    }


def write(name, obj, protocol=None):
    with open(os.path.join(HERE, name), "wb") as f:
        pickle.dump(obj, f, protocol=protocol)


def main():
    os.makedirs(HERE, exist_ok=True)
    write("segments.pickle", segments_snapshot())
    write("traced.pickle", traced_snapshot())
    write("traced.p2.pickle", traced_snapshot(), protocol=2)
    write("traced.p5.pickle", traced_snapshot(), protocol=5)


if __name__ == "__main__":
    main()
