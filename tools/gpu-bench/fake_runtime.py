"""A stand-in for `TorchCudaRuntime` with declared rates, for tests and for reconstructed fixtures.

It answers the same calls as the real runtime and "times" each operation from the work it does and
the rate declared for it (plus an optional per-call overhead), so the GPU path of gpu_bench.py —
device enumeration, precision support, every pair of GPUs, the arithmetic, the profile — runs
unchanged on a machine without a GPU. Nothing it produces is a measurement.
"""

from __future__ import annotations

from gpu_bench import PRECISIONS


class FakeGpu:
    def __init__(self, name, memory_bytes, capability, uuid, tflops, memory_gbps, h2d_gbps, d2h_gbps):
        self.name = name
        self.memory_bytes = memory_bytes
        self.capability = capability
        self.uuid = uuid
        self.tflops = tflops  # by precision; a missing precision is unsupported
        self.memory_gbps = memory_gbps
        self.h2d_gbps = h2d_gbps
        self.d2h_gbps = d2h_gbps


class FakeCudaRuntime:
    def __init__(self, gpus, peer_gbps=None, p2p=True, kind="cuda", backend="cuda 13.0", overhead_s=0.0):
        self.gpus = gpus
        self.peer_gbps = peer_gbps or {}
        self.p2p = p2p
        self.kind = kind
        self._backend = backend
        self.overhead_s = overhead_s
        self.calls = []

    def backend(self):
        return self._backend

    def device_kind(self):
        return self.kind

    def device_count(self):
        return len(self.gpus)

    def properties(self, index):
        g = self.gpus[index]
        return {"name": g.name, "memoryBytes": g.memory_bytes, "capability": g.capability, "uuid": g.uuid}

    def supports(self, index, precision):
        assert precision in PRECISIONS
        return self.gpus[index].tflops.get(precision) is not None

    def can_access_peer(self, a, b):
        return self.p2p

    def matmul_timer(self, index, n, precision):
        self.calls.append(("matmul", index, n, precision))
        seconds = 2.0 * n ** 3 / (self.gpus[index].tflops[precision] * 1e12)
        return lambda iterations: iterations * seconds + self.overhead_s

    def copy_timer(self, src, dst, nbytes):
        self.calls.append(("copy", src, dst, nbytes))
        if src == dst:
            seconds = 2.0 * nbytes / (self.gpus[int(src)].memory_gbps * 1e9)
        elif src == "host":
            seconds = nbytes / (self.gpus[int(dst)].h2d_gbps * 1e9)
        elif dst == "host":
            seconds = nbytes / (self.gpus[int(src)].d2h_gbps * 1e9)
        else:
            seconds = nbytes / (self.peer_gbps[(int(src), int(dst))] * 1e9)
        return lambda iterations: iterations * seconds + self.overhead_s

    def release(self):
        pass


# Reconstructed figures of one NVIDIA H200 (SXM, 141 GB HBM3e), NOT a recording: the published
# peaks (fp32 67, TF32 495, fp16/bf16 989 dense TFLOPS, 4.8 TB/s) times the fractions large cuBLAS
# GEMMs and device copies typically reach on Hopper, and PCIe Gen5 x16 pinned transfers.
H200_RECONSTRUCTED = FakeGpu(
    name="NVIDIA H200",
    memory_bytes=143771 * 1024 * 1024,
    capability=(9, 0),
    uuid="GPU-00000000-0000-0000-0000-000000000200",
    tflops={"fp32": 51.0, "tf32": 372.0, "fp16": 735.0, "bf16": 741.0},
    memory_gbps=4210.0,
    h2d_gbps=55.3,
    d2h_gbps=54.8,
)
