#!/usr/bin/env python3
"""Runs the edge's GPU challenge (ADR 0070) on this host the way an edge does, and records it.

It starts `challenge_worker.py` as `libs/edge-bench`'s `PythonChallengeWorker` does (`python -B
challenge_worker.py`, the environment plus PYTHONDONTWRITEBYTECODE=1 and CUDA_DEVICE_ORDER=PCI_BUS_ID),
warms the device, then for each dtype commits to a challenge sized as `sizeChallenge` sizes it for
the claimed figure (DEFAULT_CHALLENGE_POLICY), opens the rows a verifier would ask for, and writes
one JSON file per dtype holding the requests and the worker's answers. The verifier is not run
here: `libs/edge-bench` checks the recordings with `verifyOpening` wherever Node runs.

Seeds, rows and Freivalds seeds are fixed (derived from the dtype's name) so a recording can be
compared with a rerun. `--large-n` adds one commit of that size per dtype for its time alone (its
opening is taken but not written: verifying 16384² in a unit test would take minutes).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# DEFAULT_CHALLENGE_POLICY in libs/edge-bench/src/domain/challenge/challenge-policy.ts
POLICY = {"targetMs": 50, "minN": 256, "maxN": 4096, "slack": 4, "allowanceMs": 500,
          "hashBytesPerSecond": 200e6, "openRows": 8}
MAX_DEADLINE_MS = 600_000
# The H200's published dense figures (GPU_REFERENCE in libs/edge-bench/src/domain/gpu-reference.ts).
H200_CLAIM = {"bf16": 989.4, "fp16": 989.4, "fp32": 67.0}


def size_challenge(claimed_tflops: float, policy=POLICY):
    """`sizeChallenge` of challenge-policy.ts, in Python."""
    flops_per_ms = claimed_tflops * 1e9
    ideal = ((policy["targetMs"] * flops_per_ms) / 2) ** (1 / 3)
    n = min(policy["maxN"], max(policy["minN"], round(ideal / 16) * 16))
    work_ms = (2 * n**3) / flops_per_ms
    hash_ms = ((n * n * 4) / policy["hashBytesPerSecond"]) * 1000
    return n, min(MAX_DEADLINE_MS, math.ceil(policy["allowanceMs"] + policy["slack"] * work_ms + hash_ms))


def fixed_hex(label: str) -> str:
    return hashlib.sha256(f"gpunet device-check {label}".encode()).hexdigest()


def fixed_rows(label: str, n: int, count: int) -> list:
    rows, i = set(), 0
    while len(rows) < min(count, n):
        rows.add(int.from_bytes(hashlib.sha256(f"{label}/{i}".encode()).digest()[:4], "little") % n)
        i += 1
    return sorted(rows)


class Worker:
    def __init__(self, python: str, script: str):
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", CUDA_DEVICE_ORDER="PCI_BUS_ID")
        started = time.monotonic()
        self.child = subprocess.Popen([python, "-B", script], env=env, stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True, bufsize=1)
        self.ready = json.loads(self.child.stdout.readline())
        self.ready["startMs"] = round((time.monotonic() - started) * 1000, 1)

    def send(self, request: dict) -> tuple:
        t0 = time.monotonic()
        self.child.stdin.write(json.dumps(request) + "\n")
        self.child.stdin.flush()
        line = self.child.stdout.readline()
        if not line:
            raise RuntimeError(f"worker exited ({self.child.poll()}) answering {request.get('op')}")
        return json.loads(line), round((time.monotonic() - t0) * 1000, 3)

    def close(self):
        self.child.stdin.close()
        self.child.wait(timeout=30)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--dtypes", default="bf16,fp16,fp32")
    ap.add_argument("--uuid", default=None, help="the GPU's UUID, as the inventory names it")
    ap.add_argument("--n", type=int, default=0, help="override the policy's n (dry runs on a CPU)")
    ap.add_argument("--large-n", type=int, default=16384, help="an extra timing-only commit per dtype (0: none)")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    device = {"index": 0, **({"uuid": args.uuid} if args.uuid else {})}
    worker = Worker(args.python, os.path.join(HERE, "challenge_worker.py"))
    summary = {"ready": worker.ready}
    warm, warm_ms = worker.send({"op": "warm", "devices": [device]})
    summary["warm"] = {**warm, "roundTripMs": warm_ms}
    ok = warm.get("ok") is True
    summary["runs"] = []
    for dtype in args.dtypes.split(","):
        n, deadline_ms = size_challenge(H200_CLAIM[dtype])
        n = args.n or n
        sizes = [(n, deadline_ms, True)] + ([(args.large_n, MAX_DEADLINE_MS, False)] if args.large_n else [])
        for size, deadline, keep in sizes:
            cid = f"device-check-{dtype}-{size}"
            seed = fixed_hex(f"{dtype} seed {size}")
            commit = {"op": "commit", "challengeId": cid, "seed": seed, "n": size, "dtype": dtype,
                      "device": device, "deadlineMs": deadline}
            committed, commit_rt = worker.send(commit)
            rows = fixed_rows(f"{dtype} rows {size}", size, POLICY["openRows"])
            opening = {"op": "open", "challengeId": cid, "rows": rows,
                       "freivaldsSeed": fixed_hex(f"{dtype} freivalds {size}")}
            opened, open_rt = worker.send(opening) if committed.get("ok") else ({"ok": False}, 0)
            run = {"dtype": dtype, "n": size, "claimedTflops": H200_CLAIM[dtype], "deadlineMs": deadline,
                   "committed": committed.get("ok") is True, "edgeComputeMs": committed.get("edgeComputeMs"),
                   "commitRoundTripMs": commit_rt, "openRoundTripMs": open_rt,
                   "device": committed.get("device"), "error": committed.get("message")}
            if committed.get("edgeComputeMs") is not None:
                run["tflopsIncludingHashing"] = round(2 * size**3 / (committed["edgeComputeMs"] / 1000) / 1e12, 3)
            summary["runs"].append(run)
            ok = ok and run["committed"] and opened.get("ok") is True and committed["edgeComputeMs"] <= deadline
            if keep:
                with open(os.path.join(args.out, f"challenge-{dtype}.json"), "w", encoding="utf-8") as f:
                    json.dump({"commitRequest": commit, "commitAnswer": committed, "openRequest": opening,
                               "openAnswer": opened}, f, separators=(",", ":"))
            print(json.dumps(run), flush=True)
    worker.close()
    summary["ok"] = ok
    with open(os.path.join(args.out, "challenge-summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
