#!/usr/bin/env python3
"""gpunet's edge benchmark runner: measures a host's GPUs (or, without GPUs, its CPU) with torch.

Prints one JSON *benchmark profile* (libs/contracts `BenchmarkProfileSchema`, profileVersion 1):
dense matmul TFLOPS per precision (fp32 with TF32 off, tf32, fp16, bf16), device-memory copy
bandwidth, pinned host<->device bandwidth and GPU<->GPU copy bandwidth for every pair of GPUs of the
host. It runs inside the job sandbox (a container where Docker is present) with only the reserved
GPUs visible, so it never sees another tenant's device.

    /usr/bin/python3 gpu_bench.py --device auto --max-seconds 120 --ttl-seconds 86400 > profile.json

Every figure is the best of a few trials (noise from other processes only ever slows a run down,
so the fastest trial is the closest to what the hardware can do). Each timed region repeats its
operation until it has run for `--min-trial-seconds`. Problem sizes shrink with `--max-seconds` and
`--quick` (tests), never below what keeps the timer's resolution negligible.

The GPU path works with CUDA and ROCm builds of torch (both expose `torch.cuda`). Without a GPU the
CPU is measured for real and the profile says `kind: "cpu"`; nothing is ever invented here
(simulated edges are handled by the TypeScript runner in libs/edge-bench, which labels them).

Exit status: 0 with a profile on stdout; 2 for bad arguments; 3 when the requested device is absent;
1 for anything else (the message on stderr).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sys
import time
import uuid as uuidlib
from datetime import datetime, timedelta, timezone

RUNNER_NAME = "gpu-bench"
RUNNER_VERSION = "1.0.0"
PROFILE_VERSION = 1
SUITES = ("matmul", "memory", "host-device", "peer")
PRECISIONS = ("fp32", "tf32", "fp16", "bf16")


class DeviceAbsent(Exception):
    """The requested device kind does not exist on this host."""


# --------------------------------------------------------------------------------------------------
# Sizes and arithmetic (pure: the unit tests drive these with a fake runtime)
# --------------------------------------------------------------------------------------------------


class Plan:
    """Problem sizes for one run. `scale` in (0, 1] shrinks them for short budgets and tests."""

    def __init__(self, kind: str, quick: bool, max_seconds: float, min_trial_seconds: float, trials: int):
        self.kind = kind
        self.quick = quick
        self.trials = trials
        self.min_trial_seconds = min_trial_seconds
        self.deadline = None
        if kind == "gpu":
            self.matmul_n = 1024 if quick else (8192 if max_seconds >= 60 else 4096)
            self.copy_bytes = (64 << 20) if quick else (1 << 30 if max_seconds >= 60 else 256 << 20)
            self.transfer_bytes = (32 << 20) if quick else (256 << 20)
        else:
            self.matmul_n = 256 if quick else (1024 if max_seconds >= 20 else 512)
            self.copy_bytes = (16 << 20) if quick else (256 << 20 if max_seconds >= 20 else 64 << 20)
            self.transfer_bytes = 0


def within_budget(plan: Plan, notes, what: str, clock=time.monotonic) -> bool:
    """False (and a note) once the run's budget is spent: the remaining measurements are skipped."""
    if plan.deadline is None or clock() < plan.deadline:
        return True
    notes.append(f"{what} skipped: --max-seconds budget spent")
    return False


def matmul_tflops(n: int, seconds_per_op: float) -> float:
    """An n x n by n x n product does n^2 dot products of n multiply-adds: 2 n^3 operations."""
    return 2.0 * n ** 3 / seconds_per_op / 1e12


def copy_gbps(nbytes: int, seconds_per_op: float, read_and_write: bool) -> float:
    """Bandwidth of a copy: a copy inside one memory reads and writes every byte (2x), a transfer counts once."""
    moved = nbytes * (2 if read_and_write else 1)
    return moved / seconds_per_op / 1e9


def round_figure(x):
    return None if x is None else float(f"{x:.4g}")


def iso(ts: datetime) -> str:
    return ts.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}Z"


def best_seconds_per_op(run_once, min_trial_seconds: float, trials: int, clock=time.perf_counter) -> float:
    """Runs `run_once(iterations) -> elapsed seconds` in trials of at least `min_trial_seconds`; best trial wins.

    The iteration count doubles until one trial is long enough, so a fast operation is timed over
    many repetitions and a slow one over few.
    """
    iterations = 1
    best = None
    done = 0
    guard = 0
    while done < trials:
        guard += 1
        if guard > 64:
            raise RuntimeError("timing did not converge")
        elapsed = run_once(iterations)
        if elapsed < min_trial_seconds and iterations < (1 << 20):
            iterations *= 2 if elapsed * 2 >= min_trial_seconds else max(2, int(min_trial_seconds / max(elapsed, 1e-6)))
            continue
        per_op = elapsed / iterations
        best = per_op if best is None else min(best, per_op)
        done += 1
    return best


# --------------------------------------------------------------------------------------------------
# Runtimes: where the operations happen. A runtime times one operation for a number of iterations.
# --------------------------------------------------------------------------------------------------


class TorchCudaRuntime:
    """The GPUs torch sees (CUDA or ROCm), timed with device synchronisation around each trial."""

    def __init__(self, torch):
        self.torch = torch
        if not torch.cuda.is_available() or torch.cuda.device_count() == 0:
            raise DeviceAbsent("torch sees no CUDA/ROCm device")

    def backend(self) -> str:
        hip = getattr(self.torch.version, "hip", None)
        return f"rocm {hip}" if hip else f"cuda {self.torch.version.cuda}"

    def device_kind(self) -> str:
        return "rocm" if getattr(self.torch.version, "hip", None) else "cuda"

    def device_count(self) -> int:
        return self.torch.cuda.device_count()

    def properties(self, index: int) -> dict:
        p = self.torch.cuda.get_device_properties(index)
        raw_uuid = getattr(p, "uuid", None)
        uuid = None
        if raw_uuid is not None:
            text = str(raw_uuid)
            uuid = text if text.startswith("GPU-") or self.device_kind() == "rocm" else f"GPU-{text}"
        return {
            "name": p.name,
            "memoryBytes": int(p.total_memory),
            "capability": (int(p.major), int(p.minor)),
            "uuid": uuid,
        }

    def supports(self, index: int, precision: str) -> bool:
        major, _ = self.properties(index)["capability"]
        if self.device_kind() == "rocm":
            return precision != "tf32"
        if precision == "tf32":
            return major >= 8
        if precision == "bf16":
            return major >= 8
        return True

    def can_access_peer(self, a: int, b: int) -> bool:
        return bool(self.torch.cuda.can_device_access_peer(a, b))

    def _timed(self, devices, op, iterations: int) -> float:
        for d in devices:
            self.torch.cuda.synchronize(d)
        start = time.perf_counter()
        for _ in range(iterations):
            op()
        for d in devices:
            self.torch.cuda.synchronize(d)
        return time.perf_counter() - start

    def matmul_timer(self, index: int, n: int, precision: str):
        t = self.torch
        dtype = {"fp32": t.float32, "tf32": t.float32, "fp16": t.float16, "bf16": t.bfloat16}[precision]
        dev = t.device("cuda", index)
        a = t.randn(n, n, device=dev, dtype=dtype)
        b = t.randn(n, n, device=dev, dtype=dtype)
        out = t.empty(n, n, device=dev, dtype=dtype)
        tf32 = precision == "tf32"

        def run(iterations):
            previous = t.backends.cuda.matmul.allow_tf32
            t.backends.cuda.matmul.allow_tf32 = tf32
            try:
                t.matmul(a, b, out=out)  # warm-up (cuBLAS heuristics, clocks)
                return self._timed([dev], lambda: t.matmul(a, b, out=out), iterations)
            finally:
                t.backends.cuda.matmul.allow_tf32 = previous

        return run

    def copy_timer(self, src: str, dst: str, nbytes: int):
        """`src`/`dst`: `host` (pinned) or a device index as a string."""
        t = self.torch

        def alloc(where):
            if where == "host":
                return t.empty(nbytes, dtype=t.uint8, pin_memory=True)
            return t.empty(nbytes, dtype=t.uint8, device=t.device("cuda", int(where)))

        s, d = alloc(src), alloc(dst)
        devices = [t.device("cuda", int(w)) for w in (src, dst) if w != "host"]

        def run(iterations):
            d.copy_(s, non_blocking=True)
            return self._timed(devices, lambda: d.copy_(s, non_blocking=True), iterations)

        return run

    def release(self):
        self.torch.cuda.empty_cache()


class TorchCpuRuntime:
    """The host CPU, measured with torch's CPU kernels (oneDNN/MKL where the build has them)."""

    def __init__(self, torch, threads):
        self.torch = torch
        if threads:
            torch.set_num_threads(threads)

    def blas(self) -> str:
        found = re.search(r"\bBLAS_INFO=([^,\s]+)", self.torch.__config__.show())
        return found.group(1) if found else "unknown"

    def threads(self) -> int:
        return int(self.torch.get_num_threads())

    def matmul_timer(self, n: int, precision: str):
        t = self.torch
        if precision == "tf32":
            return None
        dtype = {"fp32": t.float32, "fp16": t.float16, "bf16": t.bfloat16}[precision]
        a = t.randn(n, n).to(dtype)
        b = t.randn(n, n).to(dtype)
        try:
            t.matmul(a, b)
        except RuntimeError:
            return None  # e.g. fp16 matmul has no CPU kernel in older torch

        def run(iterations):
            start = time.perf_counter()
            for _ in range(iterations):
                t.matmul(a, b)
            return time.perf_counter() - start

        return run

    def copy_timer(self, nbytes: int):
        t = self.torch
        s = t.ones(nbytes, dtype=t.uint8)
        d = t.empty(nbytes, dtype=t.uint8)

        def run(iterations):
            d.copy_(s)
            start = time.perf_counter()
            for _ in range(iterations):
                d.copy_(s)
            return time.perf_counter() - start

        return run


# --------------------------------------------------------------------------------------------------
# The two measurement paths
# --------------------------------------------------------------------------------------------------


def measure_gpus(rt, plan: Plan, suites, uuids, notes):
    """Every GPU the runtime sees, then every pair of them. Returns (devices, peers)."""
    devices = []
    count = rt.device_count()
    for index in range(count):
        props = rt.properties(index)
        tflops = {p: None for p in PRECISIONS}
        if "matmul" in suites:
            for precision in PRECISIONS:
                if not within_budget(plan, notes, f"GPU {index} {precision} matmul"):
                    continue
                if not rt.supports(index, precision):
                    notes.append(f"GPU {index}: {precision} unsupported (compute capability {props['capability']})")
                    continue
                per_op = best_seconds_per_op(
                    rt.matmul_timer(index, plan.matmul_n, precision), plan.min_trial_seconds, plan.trials
                )
                tflops[precision] = round_figure(matmul_tflops(plan.matmul_n, per_op))
        memory = h2d = d2h = None
        if "memory" in suites and within_budget(plan, notes, f"GPU {index} memory"):
            per_op = best_seconds_per_op(
                rt.copy_timer(str(index), str(index), plan.copy_bytes), plan.min_trial_seconds, plan.trials
            )
            memory = round_figure(copy_gbps(plan.copy_bytes, per_op, read_and_write=True))
        if "host-device" in suites and within_budget(plan, notes, f"GPU {index} host-device"):
            h2d = round_figure(
                copy_gbps(
                    plan.transfer_bytes,
                    best_seconds_per_op(
                        rt.copy_timer("host", str(index), plan.transfer_bytes), plan.min_trial_seconds, plan.trials
                    ),
                    read_and_write=False,
                )
            )
            d2h = round_figure(
                copy_gbps(
                    plan.transfer_bytes,
                    best_seconds_per_op(
                        rt.copy_timer(str(index), "host", plan.transfer_bytes), plan.min_trial_seconds, plan.trials
                    ),
                    read_and_write=False,
                )
            )
        uuid = uuids.get(index) if uuids else None
        devices.append(
            {
                "index": index,
                "uuid": uuid or props["uuid"],
                "name": props["name"],
                "kind": rt.device_kind(),
                "memoryBytes": props["memoryBytes"],
                "matmulTflops": tflops,
                "memoryBandwidthGBps": memory,
                "hostToDeviceGBps": h2d,
                "deviceToHostGBps": d2h,
            }
        )
        rt.release()
    peers = []
    if "peer" in suites:
        if count < 2:
            notes.append("peer suite skipped: one GPU")
        for a in range(count):
            for b in range(a + 1, count):
                if not within_budget(plan, notes, f"GPU {a}<->{b} peer copy"):
                    continue
                per_op = best_seconds_per_op(
                    rt.copy_timer(str(a), str(b), plan.transfer_bytes), plan.min_trial_seconds, plan.trials
                )
                peers.append(
                    {
                        "a": a,
                        "b": b,
                        "GBps": round_figure(copy_gbps(plan.transfer_bytes, per_op, read_and_write=False)),
                        "p2p": rt.can_access_peer(a, b),
                    }
                )
                rt.release()
    return devices, peers


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "cpu"


def host_memory_bytes():
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def measure_cpu(rt, plan: Plan, suites, notes):
    tflops = {p: None for p in PRECISIONS}
    if "matmul" in suites:
        for precision in PRECISIONS:
            if precision == "tf32":
                continue  # a GPU tensor-core mode: nothing to measure on a CPU
            if not within_budget(plan, notes, f"CPU {precision} matmul"):
                continue
            timer = rt.matmul_timer(plan.matmul_n, precision)
            if timer is None:
                notes.append(f"CPU: no {precision} matmul kernel in this torch build")
                continue
            per_op = best_seconds_per_op(timer, plan.min_trial_seconds, plan.trials)
            tflops[precision] = round_figure(matmul_tflops(plan.matmul_n, per_op))
    memory = None
    if "memory" in suites and within_budget(plan, notes, "CPU memory"):
        per_op = best_seconds_per_op(rt.copy_timer(plan.copy_bytes), plan.min_trial_seconds, plan.trials)
        memory = round_figure(copy_gbps(plan.copy_bytes, per_op, read_and_write=True))
    for suite in ("host-device", "peer"):
        if suite in suites:
            notes.append(f"{suite} suite skipped: no GPU")
    return [
        {
            "index": 0,
            "uuid": None,
            "name": cpu_model()[:256],
            "kind": "cpu",
            "memoryBytes": host_memory_bytes(),
            "matmulTflops": tflops,
            "memoryBandwidthGBps": memory,
            "hostToDeviceGBps": None,
            "deviceToHostGBps": None,
        }
    ]


def build_profile(kind, backend, threads, torch_version, started, finished, ttl_seconds, devices, peers, notes, profile_id):
    return {
        "profileVersion": PROFILE_VERSION,
        "profileId": profile_id,
        "kind": kind,
        "runner": {
            "name": RUNNER_NAME,
            "version": RUNNER_VERSION,
            "python": platform.python_version(),
            "torch": torch_version,
            "backend": backend,
            "threads": threads,
        },
        "measuredAt": iso(finished),
        "expiresAt": iso(finished + timedelta(seconds=ttl_seconds)),
        "durationMs": int((finished - started).total_seconds() * 1000),
        "devices": devices,
        "peers": peers,
        "notes": notes[:32],
    }


def parse_uuids(text):
    """`0=GPU-aaa,1=GPU-bbb` (nvidia-smi's ids by index) -> {0: 'GPU-aaa', 1: 'GPU-bbb'}."""
    out = {}
    if not text:
        return out
    for part in text.split(","):
        index, _, value = part.partition("=")
        out[int(index)] = value.strip()
    return out


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    ap.add_argument("--suites", default=",".join(SUITES), help="comma list of " + ",".join(SUITES))
    ap.add_argument("--max-seconds", type=float, default=120.0, help="budget of the whole run (sizes shrink to fit)")
    ap.add_argument("--ttl-seconds", type=int, default=7 * 24 * 3600, help="profile validity after measuredAt")
    ap.add_argument("--min-trial-seconds", type=float, default=0.25)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="CPU threads (0: torch's default)")
    ap.add_argument("--quick", action="store_true", help="tiny sizes (tests)")
    ap.add_argument("--profile-id", default=None)
    ap.add_argument("--uuids", default="", help="GPU ids by index: 0=GPU-…,1=GPU-…")
    args = ap.parse_args(argv)
    suites = [s for s in args.suites.split(",") if s]
    bad = [s for s in suites if s not in SUITES]
    if bad or not suites:
        ap.error(f"unknown suites: {bad}")
    args.suites = suites
    return args


def main(argv=None, torch_module=None, now=lambda: datetime.now(timezone.utc)) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    # nvidia-smi numbers GPUs by PCI bus id; make torch do the same so that indices agree.
    os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    if torch_module is None:
        import torch as torch_module  # noqa: PLC0415 — after CUDA_DEVICE_ORDER
    torch = torch_module
    started = now()
    notes = []
    profile_id = args.profile_id or str(uuidlib.uuid4())
    use_gpu = args.device == "cuda" or (args.device == "auto" and torch.cuda.is_available())
    try:
        if use_gpu:
            rt = TorchCudaRuntime(torch)
            plan = Plan("gpu", args.quick, args.max_seconds, args.min_trial_seconds, args.trials)
            plan.deadline = time.monotonic() + args.max_seconds
            devices, peers = measure_gpus(rt, plan, args.suites, parse_uuids(args.uuids), notes)
            kind, backend, threads = "gpu", rt.backend(), None
        else:
            rt = TorchCpuRuntime(torch, args.threads)
            plan = Plan("cpu", args.quick, args.max_seconds, args.min_trial_seconds, args.trials)
            plan.deadline = time.monotonic() + args.max_seconds
            devices, peers = measure_cpu(rt, plan, args.suites, notes), []
            kind, backend, threads = "cpu", "cpu", rt.threads()
            notes.append(f"CPU: torch {torch.__version__} BLAS_INFO={rt.blas()}, {threads} thread(s)")
    except DeviceAbsent as e:
        print(f"gpu-bench: {e}", file=sys.stderr)
        return 3
    if args.quick:
        notes.append("quick run: small problem sizes, figures understate the hardware")
    profile = build_profile(
        kind, backend, threads, str(torch.__version__), started, now(), args.ttl_seconds, devices, peers, notes, profile_id
    )
    json.dump(profile, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001 — the edge reports the runner's last words
        print(f"gpu-bench: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
