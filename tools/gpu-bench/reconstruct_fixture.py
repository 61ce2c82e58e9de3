#!/usr/bin/env python3
"""Writes fixtures/h200.reconstructed.profile.json: the profile gpu_bench.py's GPU path produces for
one H200 whose rates are *reconstructed* from published figures (fake_runtime.H200_RECONSTRUCTED).

No GPU machine was at hand when F4 was built. When one is, run device-check.sh there and keep its
real profile as fixtures/h200.recorded.profile.json beside this one.
"""

import json
import sys
from datetime import datetime, timezone

from fake_runtime import H200_RECONSTRUCTED, FakeCudaRuntime
from gpu_bench import Plan, build_profile, measure_gpus

NOTE = (
    "RECONSTRUCTED, not recorded: H200 rates from published peaks x typical achieved fractions, "
    "run through gpu_bench.py's GPU path with tools/gpu-bench/fake_runtime.py"
)


def reconstruct():
    rt = FakeCudaRuntime([H200_RECONSTRUCTED], backend="cuda 13.0")
    plan = Plan("gpu", False, 120, 0.25, 3)
    notes = [NOTE]
    devices, peers = measure_gpus(rt, plan, ["matmul", "memory", "host-device", "peer"], {}, notes)
    started = datetime(2026, 1, 1, tzinfo=timezone.utc)
    finished = datetime(2026, 1, 1, 0, 1, 30, tzinfo=timezone.utc)
    profile = build_profile(
        "gpu", rt.backend(), None, "2.11.0", started, finished, 7 * 24 * 3600, devices, peers, notes,
        "h200-reconstructed-0001",
    )
    profile["runner"]["python"] = "3.12.3"
    return profile


if __name__ == "__main__":
    json.dump(reconstruct(), sys.stdout, indent=2)
    sys.stdout.write("\n")
