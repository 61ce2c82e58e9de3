"""Unit tests of gpu_bench.py's arithmetic, timing loop and GPU path (on a fake runtime: no GPU here).

Run: /usr/bin/python3 -B -m unittest discover -s tools/gpu-bench -p 'test_*.py'
(`tools/gpu-bench/test/gpu-bench.unit.spec.ts` runs them in the unit tier).
"""

import json
import os
import unittest

import gpu_bench
from fake_runtime import H200_RECONSTRUCTED, FakeCudaRuntime, FakeGpu
from reconstruct_fixture import reconstruct

HERE = os.path.dirname(os.path.abspath(__file__))


def h100(i):
    return FakeGpu(
        name="NVIDIA H100 80GB HBM3",
        memory_bytes=81559 * 1024 * 1024,
        capability=(9, 0),
        uuid=f"GPU-h100-{i}",
        tflops={"fp32": 50.0, "tf32": 360.0, "fp16": 700.0, "bf16": 705.0},
        memory_gbps=2900.0,
        h2d_gbps=54.0,
        d2h_gbps=53.0,
    )


ALL = ["matmul", "memory", "host-device", "peer"]


class Arithmetic(unittest.TestCase):
    def test_matmul_counts_two_n_cubed(self):
        self.assertAlmostEqual(gpu_bench.matmul_tflops(1000, 2e-3), 1.0)

    def test_copy_counts_read_and_write_inside_one_memory(self):
        self.assertAlmostEqual(gpu_bench.copy_gbps(1_000_000_000, 1.0, read_and_write=True), 2.0)
        self.assertAlmostEqual(gpu_bench.copy_gbps(1_000_000_000, 1.0, read_and_write=False), 1.0)

    def test_iso_is_utc_with_milliseconds_and_z(self):
        from datetime import datetime, timezone

        self.assertEqual(gpu_bench.iso(datetime(2026, 3, 4, 5, 6, 7, 891000, tzinfo=timezone.utc)), "2026-03-04T05:06:07.891Z")


class Timing(unittest.TestCase):
    def test_grows_iterations_until_a_trial_is_long_enough_and_keeps_the_best(self):
        seen = []
        noise = iter([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.004, 0.0, 0.002] + [0.0] * 20)

        def run(iterations):
            seen.append(iterations)
            return iterations * 0.001 + next(noise)

        per_op = gpu_bench.best_seconds_per_op(run, 0.05, 3)
        self.assertGreaterEqual(seen[-1] * 0.001, 0.05)
        self.assertAlmostEqual(per_op, 0.001, places=6)
        self.assertEqual(seen[0], 1)


class GpuPath(unittest.TestCase):
    def plan(self):
        return gpu_bench.Plan("gpu", False, 120, 0.25, 2)

    def test_measures_every_gpu_and_every_pair_of_an_eight_gpu_host(self):
        peers = {(a, b): 360.0 + a + b for a in range(8) for b in range(8) if a != b}
        rt = FakeCudaRuntime([h100(i) for i in range(8)], peer_gbps=peers)
        notes = []
        devices, pairs = gpu_bench.measure_gpus(rt, self.plan(), ALL, {}, notes)
        self.assertEqual([d["index"] for d in devices], list(range(8)))
        self.assertEqual(devices[3]["uuid"], "GPU-h100-3")
        self.assertEqual(devices[0]["matmulTflops"], {"fp32": 50.0, "tf32": 360.0, "fp16": 700.0, "bf16": 705.0})
        self.assertEqual(devices[0]["memoryBandwidthGBps"], 2900.0)
        self.assertEqual((devices[0]["hostToDeviceGBps"], devices[0]["deviceToHostGBps"]), (54.0, 53.0))
        self.assertEqual(len(pairs), 28)
        self.assertEqual(pairs[-1], {"a": 6, "b": 7, "GBps": 373.0, "p2p": True})
        self.assertEqual(notes, [])
        self.assertIn(("matmul", 0, 8192, "tf32"), rt.calls)

    def test_leaves_unsupported_precisions_null_and_says_why(self):
        v100 = FakeGpu("Tesla V100-SXM2-32GB", 32 << 30, (7, 0), "GPU-v100", {"fp32": 14.0, "fp16": 100.0}, 800.0, 12.0, 12.0)
        notes = []
        devices, _ = gpu_bench.measure_gpus(FakeCudaRuntime([v100]), self.plan(), ALL, {}, notes)
        self.assertEqual(devices[0]["matmulTflops"], {"fp32": 14.0, "tf32": None, "fp16": 100.0, "bf16": None})
        self.assertIn("GPU 0: tf32 unsupported (compute capability (7, 0))", notes)
        self.assertIn("peer suite skipped: one GPU", notes)

    def test_names_gpus_by_the_ids_the_edge_passes(self):
        gpu = h100(0)
        gpu.uuid = None
        devices, _ = gpu_bench.measure_gpus(FakeCudaRuntime([gpu]), self.plan(), ["memory"], {0: "GPU-from-smi"}, [])
        self.assertEqual(devices[0]["uuid"], "GPU-from-smi")
        self.assertEqual(devices[0]["matmulTflops"]["fp16"], None)

    def test_skips_what_does_not_fit_the_budget(self):
        plan = self.plan()
        plan.deadline = 0.0
        notes = []
        devices, pairs = gpu_bench.measure_gpus(FakeCudaRuntime([h100(0), h100(1)], peer_gbps={(0, 1): 1.0}), plan, ALL, {}, notes)
        self.assertEqual(devices[0]["memoryBandwidthGBps"], None)
        self.assertEqual(pairs, [])
        self.assertIn("GPU 0<->1 peer copy skipped: --max-seconds budget spent", notes)

    def test_rocm_devices_are_labelled_rocm(self):
        mi = FakeGpu("AMD Instinct MI300X", 192 << 30, (9, 4), "AMD-0x1", {"fp32": 120.0, "fp16": 800.0, "bf16": 790.0}, 4300.0, 50.0, 50.0)
        devices, _ = gpu_bench.measure_gpus(FakeCudaRuntime([mi], kind="rocm", backend="rocm 6.2"), self.plan(), ["matmul"], {}, [])
        self.assertEqual(devices[0]["kind"], "rocm")


class Fixture(unittest.TestCase):
    def test_the_reconstructed_h200_fixture_is_what_the_gpu_path_produces(self):
        with open(os.path.join(HERE, "fixtures", "h200.reconstructed.profile.json"), encoding="utf-8") as f:
            kept = json.load(f)
        self.assertEqual(kept, reconstruct())
        self.assertTrue(kept["notes"][0].startswith("RECONSTRUCTED, not recorded"))
        self.assertEqual(kept["devices"][0]["name"], H200_RECONSTRUCTED.name)


class Arguments(unittest.TestCase):
    def test_refuses_unknown_suites(self):
        with self.assertRaises(SystemExit) as e:
            gpu_bench.parse_args(["--suites", "matmul,nvlink"])
        self.assertEqual(e.exception.code, 2)

    def test_parses_gpu_ids(self):
        self.assertEqual(gpu_bench.parse_uuids("0=GPU-a,1=GPU-b"), {0: "GPU-a", 1: "GPU-b"})


if __name__ == "__main__":
    unittest.main()
