"""Tests of challenge_worker.py against the golden vectors the TypeScript core wrote (ADR 0070).

Needs torch (the worker's derivation is torch integer ops); run by
tools/gpu-bench/test/challenge-worker.unit.spec.ts:

    /usr/bin/python3 -B -m unittest tools/gpu-bench/challenge_worker_test.py
"""

import json
import os
import unittest

import torch

import challenge_worker as cw

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "fixtures", "challenge-golden.json"), encoding="utf8") as f:
    GOLDEN = json.load(f)


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def commit(worker, cid, seed, n, dtype="fp32", deadline_ms=600_000):
    return worker.commit(
        {"challengeId": cid, "seed": seed, "n": n, "dtype": dtype, "device": {"index": 0}, "deadlineMs": deadline_ms}
    )


class Derivation(unittest.TestCase):
    def test_stream_states(self):
        for v in GOLDEN["states"]:
            self.assertEqual(cw.stream_state(v["seed"], v["stream"]), v["state"], v)

    def test_entries_scalar_and_vectorised(self):
        for v in GOLDEN["entries"]:
            self.assertEqual(cw.entry(v["seed"], v["matrix"], v["row"], v["col"]), v["value"], v)
            state = cw.stream_state(v["seed"], v["matrix"])
            rows = cw.derive_rows(torch, state, v["row"], v["row"] + 1, v["col"] + 1, "cpu")
            self.assertEqual(int(rows[0, v["col"]]), v["value"], v)

    def test_freivalds_scalar_and_vectorised(self):
        for v in GOLDEN["freivalds"]:
            self.assertEqual(cw.freivalds_entry(v["seed"], v["j"]), v["value"], v)
            self.assertEqual(int(cw.freivalds_vector(torch, v["seed"], v["j"] + 1)[v["j"]]), v["value"], v)

    def test_leaves(self):
        self.assertEqual(cw.EMPTY_LEAF.hex(), GOLDEN["emptyLeaf"])
        leaf = GOLDEN["leaf"]
        import numpy as np

        row = np.array(leaf["values"], dtype="<i4").tobytes()
        self.assertEqual(cw.leaf(leaf["index"], row).hex(), leaf["hash"])


class CommitAndOpen(unittest.TestCase):
    def test_golden_products_at_every_dtype(self):
        for p in GOLDEN["products"]:
            for dtype in cw.DTYPES:
                worker = cw.Worker(torch, 300)
                answer = commit(worker, "golden", p["seed"], p["n"], dtype)
                self.assertEqual(answer["root"], p["root"], (p["n"], dtype))
                rows = [r["index"] for r in p["opened"]]
                opened = worker.open({"challengeId": "golden", "rows": rows, "freivaldsSeed": p["freivaldsSeed"]})
                self.assertEqual(opened["rows"], p["opened"])
                self.assertEqual(opened["product"], p["product"])

    def test_bf16_blocks_keep_large_sums_exact(self):
        # n = 1024 > 256: a bf16 product without fp32 block sums would round entries above 256.
        seed = GOLDEN["products"][0]["seed"]
        self.assertEqual(
            commit(cw.Worker(torch, 300), "a", seed, 1024, "bf16")["root"],
            commit(cw.Worker(torch, 300), "b", seed, 1024, "fp32")["root"],
        )

    def test_deadline_stops_the_work(self):
        clock = FakeClock()
        worker = cw.Worker(torch, 300, clock=lambda: clock())
        real = torch.matmul

        def slow_matmul(a, b):
            clock.now += 0.05  # each block "takes" 50 ms
            return real(a, b)

        worker.matmul = slow_matmul
        with self.assertRaises(cw.WorkerError) as caught:
            commit(worker, "slow", GOLDEN["products"][0]["seed"], 512, "bf16", deadline_ms=120)
        self.assertEqual(caught.exception.code, "DEADLINE")
        # 120 ms at 50 ms a block: stopped after the third block, long before the 2 x 8 blocks of n=512.
        self.assertRegex(str(caught.exception), r"after 150 ms .* 3 blocks")
        self.assertEqual(worker.kept, {})

    def test_keeps_two_commitments_and_forgets_opened_and_expired(self):
        clock = FakeClock()
        worker = cw.Worker(torch, 60, clock=lambda: clock())
        seed = GOLDEN["products"][0]["seed"]
        for cid in ("c1", "c2", "c3"):
            commit(worker, cid, seed, 16)
        self.assertEqual(list(worker.kept), ["c2", "c3"])
        worker.open({"challengeId": "c2", "rows": [0], "freivaldsSeed": seed})
        with self.assertRaises(cw.WorkerError) as again:
            worker.open({"challengeId": "c2", "rows": [0], "freivaldsSeed": seed})
        self.assertEqual(again.exception.code, "UNKNOWN_CHALLENGE")
        clock.now += 61
        with self.assertRaises(cw.WorkerError) as expired:
            worker.open({"challengeId": "c3", "rows": [0], "freivaldsSeed": seed})
        self.assertEqual(expired.exception.code, "UNKNOWN_CHALLENGE")

    def test_rejects_requests_off_contract(self):
        worker = cw.Worker(torch, 60)
        seed = GOLDEN["products"][0]["seed"]
        cases = {
            "n": {"n": 17},
            "dtype": {"dtype": "fp64"},
            "device.index": {"device": {"index": -1}},
            "deadlineMs": {"deadlineMs": 0},
            "seed": {"seed": "ab"},
        }
        for field, change in cases.items():
            req = {"op": "commit", "challengeId": "x", "seed": seed, "n": 16, "dtype": "fp32", "device": {"index": 0}, "deadlineMs": 1000}
            req.update(change)
            with self.assertRaises(cw.WorkerError) as caught:
                worker.handle(req)
            self.assertEqual(caught.exception.code, "INVALID_REQUEST", field)
            self.assertIn(field.split(".")[0], str(caught.exception), field)
        commit(worker, "x", seed, 16)
        for rows in ([], [16], [1, 1], ["a"]):
            with self.assertRaises(cw.WorkerError) as caught:
                worker.open({"challengeId": "x", "rows": rows, "freivaldsSeed": seed})
            self.assertEqual(caught.exception.code, "INVALID_REQUEST", rows)


if __name__ == "__main__":
    unittest.main()
