#!/usr/bin/env python3
"""gpunet's challenge worker: computes a seeded matrix product on one device and opens it (ADR 0070).

A long-lived process that `libs/edge-bench` (`spawnChallengeWorker`) starts beside the edge. It reads
one JSON request per line on stdin and writes one JSON answer per line on stdout, in order:

    {"op": "commit", "challengeId", "seed", "n", "dtype", "device": {"index", "uuid"}, "deadlineMs"}
        -> {"ok": true, "root", "edgeComputeMs", "device"}
    {"op": "open", "challengeId", "rows": [...], "freivaldsSeed"}
        -> {"ok": true, "rows": [{"index", "values", "proof"}], "product": [...]}
    {"op": "warm", "devices": [{"index", "uuid"}]} -> {"ok": true, "devices": [...]}
    anything that fails -> {"ok": false, "code", "message"}

The first line it prints is {"ready": true, ...} once torch is imported.

Inputs A and B (n x n, entries in {-1, 0, 1}) are derived from the seed by the same counter-based
hash as `libs/edge-bench/src/domain/challenge/challenge-derivation.ts` (golden vectors in
fixtures/challenge-golden.json), here with torch integer ops over whole blocks. The product is
computed at the requested input dtype with fp32 accumulation: the reduction dimension is cut into
blocks short enough (bf16 256, fp16 2048) that every partial sum is an integer the input dtype
holds exactly, whatever order or precision the library reduces in, and the blocks are summed in
fp32 (|c| <= n <= 16384 < 2^24). So the product is bit-exact on every device. The commitment is the
Merkle root over its rows: leaf i = sha256(0x00 | u32le(i) | row as int32 LE), node =
sha256(0x01 | left | right), padded with sha256(0x00) to a power of two.

CUDA (or ROCm) when torch sees the named device, else the CPU: a real, slow path. The work is cut
into blocks and the deadline is checked between them, so a host too slow for its claim stops and
answers DEADLINE instead of burning its CPU for minutes. At most two commitments are kept (the
oldest is dropped), each until it is opened or its TTL passes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import struct
import sys
import time

MASK = 0xFFFFFFFF
STATE_INIT = 0x243F6A88
ROW_MULTIPLIER = 0x9E3779B1
COL_MULTIPLIER = 0x27D4EB2F
TAGS = {"A": 0x41, "B": 0x42, "r": 0x72}
FREIVALDS_BOUND = 1 << 20
DTYPES = ("fp16", "bf16", "fp32")
# Longest reduction whose partial sums of {-1,0,1} products every input dtype holds exactly.
K_BLOCK = {"bf16": 256, "fp16": 2048, "fp32": 16384}
MAX_N = 16384
MAX_KEPT = 2
EMPTY_LEAF = hashlib.sha256(b"\x00").digest()


class WorkerError(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


# --------------------------------------------------------------------------------------------------
# Derivation (scalar twins of the TypeScript, then the vectorised torch form)
# --------------------------------------------------------------------------------------------------


def fmix32(h: int) -> int:
    h &= MASK
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & MASK
    h ^= h >> 16
    return h


def stream_state(seed_hex: str, stream: str) -> int:
    raw = bytes.fromhex(seed_hex)
    if len(raw) != 32:
        raise WorkerError("INVALID_REQUEST", "seed: must be 32 bytes of hex")
    s = STATE_INIT
    for (word,) in struct.iter_unpack("<I", raw):
        s = fmix32(s ^ word)
    return fmix32(s ^ TAGS[stream])


def row_key(state: int, row: int) -> int:
    return fmix32(state ^ ((row * ROW_MULTIPLIER) & MASK))


def entry(seed_hex: str, matrix: str, row: int, col: int) -> int:
    return fmix32(row_key(stream_state(seed_hex, matrix), row) ^ ((col * COL_MULTIPLIER) & MASK)) % 3 - 1


def freivalds_entry(seed_hex: str, j: int) -> int:
    return fmix32(row_key(stream_state(seed_hex, "r"), j)) % (2 * FREIVALDS_BOUND + 1) - FREIVALDS_BOUND


def t_mul32(x, c: int):
    """(x * c) mod 2^32 for int64 tensors holding 32-bit words, without overflowing int64."""
    return (x * (c & 0xFFFF) + (((x * (c >> 16)) & 0xFFFF) << 16)) & MASK


def t_fmix32(h):
    h = h ^ (h >> 16)
    h = t_mul32(h, 0x85EBCA6B)
    h = h ^ (h >> 13)
    h = t_mul32(h, 0xC2B2AE35)
    return h ^ (h >> 16)


def derive_rows(torch, state: int, row0: int, row1: int, n: int, device):
    """Rows row0..row1-1 of a matrix, as int64 {-1, 0, 1}."""
    rows = torch.arange(row0, row1, dtype=torch.int64, device=device)
    keys = t_fmix32(t_mul32(rows, ROW_MULTIPLIER) ^ state)
    cols = t_mul32(torch.arange(n, dtype=torch.int64, device=device), COL_MULTIPLIER)
    return t_fmix32(keys[:, None] ^ cols[None, :]) % 3 - 1


def freivalds_vector(torch, seed_hex: str, n: int):
    state = stream_state(seed_hex, "r")
    j = torch.arange(n, dtype=torch.int64)
    return t_fmix32(t_fmix32(t_mul32(j, ROW_MULTIPLIER) ^ state)) % (2 * FREIVALDS_BOUND + 1) - FREIVALDS_BOUND


# --------------------------------------------------------------------------------------------------
# Commitment
# --------------------------------------------------------------------------------------------------


def leaf(index: int, row_le_int32: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + struct.pack("<I", index) + row_le_int32).digest()


def merkle_levels(leaves: list) -> list:
    width = 1
    while width < len(leaves):
        width *= 2
    level = leaves + [EMPTY_LEAF] * (width - len(leaves))
    levels = [level]
    while len(level) > 1:
        level = [hashlib.sha256(b"\x01" + level[i] + level[i + 1]).digest() for i in range(0, len(level), 2)]
        levels.append(level)
    return levels


def proof(levels: list, index: int) -> list:
    return [levels[depth][(index >> depth) ^ 1].hex() for depth in range(len(levels) - 1)]


# --------------------------------------------------------------------------------------------------
# The worker
# --------------------------------------------------------------------------------------------------


class Worker:
    def __init__(self, torch, ttl_seconds: float, clock=time.monotonic):
        self.torch = torch
        self.ttl = ttl_seconds
        self.clock = clock
        self.kept = {}  # challengeId -> (created, n, int32 numpy product, levels)
        self.cpu_fp16 = None
        # The one heavy operation, replaceable in tests (a slow device without a slow test).
        self.matmul = torch.matmul

    def cuda_available(self) -> bool:
        t = self.torch
        return bool(t.cuda.is_available()) and t.cuda.device_count() > 0

    def device(self, spec):
        """cuda:index when torch sees it (checked against the uuid when torch knows uuids), else the CPU."""
        t = self.torch
        index = spec.get("index") if isinstance(spec, dict) else None
        uuid = spec.get("uuid") if isinstance(spec, dict) else None
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            raise WorkerError("INVALID_REQUEST", "device.index: must be a non-negative integer")
        if self.cuda_available() and index < t.cuda.device_count():
            props = t.cuda.get_device_properties(index)
            raw = getattr(props, "uuid", None)
            if uuid and raw is not None:
                seen = str(raw)
                if seen.removeprefix("GPU-") != str(uuid).removeprefix("GPU-"):
                    raise WorkerError("UNKNOWN_DEVICE", f"cuda:{index} is {seen}, not {uuid}")
            return t.device("cuda", index), f"cuda:{index} {props.name}"
        return t.device("cpu"), "cpu"

    def compute_dtype(self, device, dtype: str):
        t = self.torch
        if dtype not in DTYPES:
            raise WorkerError("INVALID_REQUEST", f"dtype: one of {', '.join(DTYPES)}")
        if device.type == "cuda":
            if dtype == "bf16" and not t.cuda.is_bf16_supported():
                raise WorkerError("UNSUPPORTED_DTYPE", f"{device} has no bf16")
            return {"fp16": t.float16, "bf16": t.bfloat16, "fp32": t.float32}[dtype], dtype
        if dtype == "fp16":
            if self.cpu_fp16 is None:
                try:
                    a = t.ones(2, 2, dtype=t.float16)
                    t.matmul(a, a)
                    self.cpu_fp16 = True
                except RuntimeError:
                    self.cpu_fp16 = False
            if not self.cpu_fp16:
                # Inputs and result are exact in every dtype: fp32 computes the same product.
                return t.float32, "fp32"
        return {"fp16": t.float16, "bf16": t.bfloat16, "fp32": t.float32}[dtype], dtype

    def evict(self):
        now = self.clock()
        for cid in [c for c, kept in self.kept.items() if now - kept[0] > self.ttl]:
            del self.kept[cid]

    def commit(self, req: dict) -> dict:
        received = self.clock()
        t = self.torch
        cid = req.get("challengeId")
        n = req.get("n")
        deadline_ms = req.get("deadlineMs")
        if not isinstance(cid, str) or not cid:
            raise WorkerError("INVALID_REQUEST", "challengeId: a non-empty string")
        if not isinstance(n, int) or isinstance(n, bool) or n < 16 or n > MAX_N or n % 16 != 0:
            raise WorkerError("INVALID_REQUEST", f"n: a multiple of 16 in [16, {MAX_N}]")
        if not isinstance(deadline_ms, (int, float)) or deadline_ms <= 0:
            raise WorkerError("INVALID_REQUEST", "deadlineMs: a positive number")
        seed = req.get("seed")
        if not isinstance(seed, str) or len(seed) != 64:
            raise WorkerError("INVALID_REQUEST", "seed: 64 hex digits")
        state_a = stream_state(seed, "A")
        state_b = stream_state(seed, "B")
        device, label = self.device(req.get("device"))
        dtype, used = self.compute_dtype(device, req.get("dtype"))
        deadline = received + deadline_ms / 1000.0
        blocks = {"done": 0}

        def check(stage: str):
            if self.clock() > deadline:
                spent = (self.clock() - received) * 1000
                raise WorkerError(
                    "DEADLINE",
                    f"deadline of {deadline_ms} ms passed after {spent:.0f} ms ({stage}, {blocks['done']} blocks); stopped",
                )

        on_gpu = device.type == "cuda"
        if on_gpu and used == "fp32":
            t.backends.cuda.matmul.allow_tf32 = False
        k_block = min(K_BLOCK[used], n)
        # Rows of A per block: the whole matrix on a GPU (few large products), 64 rows on a CPU so
        # the deadline is looked at often.
        row_block = n if on_gpu else 64
        chunk = max(16, (1 << 22) // n)
        b_rows = []
        for r0 in range(0, n, chunk):
            b_rows.append(derive_rows(t, state_b, r0, min(n, r0 + chunk), n, device).to(dtype))
            check("deriving B")
        b = t.cat(b_rows)
        del b_rows
        leaves = []
        product = None
        import numpy as np

        product = np.empty((n, n), dtype="<i4")
        for r0 in range(0, n, row_block):
            r1 = min(n, r0 + row_block)
            a = derive_rows(t, state_a, r0, r1, n, device).to(dtype)
            c = t.zeros((r1 - r0, n), dtype=t.float32, device=device)
            for k0 in range(0, n, k_block):
                c += self.matmul(a[:, k0 : k0 + k_block], b[k0 : k0 + k_block, :]).float()
                blocks["done"] += 1
                if not on_gpu:
                    check("multiplying")
            block = c.to(t.int32).cpu().numpy().astype("<i4", copy=False)
            check("multiplying")
            product[r0:r1] = block
            for i in range(r1 - r0):
                leaves.append(leaf(r0 + i, block[i].tobytes()))
            check("hashing")
        levels = merkle_levels(leaves)
        check("hashing")
        self.evict()
        self.kept.pop(cid, None)
        while len(self.kept) >= MAX_KEPT:
            del self.kept[next(iter(self.kept))]
        self.kept[cid] = (self.clock(), n, product, levels)
        return {
            "ok": True,
            "root": levels[-1][0].hex(),
            "edgeComputeMs": round((self.clock() - received) * 1000, 3),
            "device": label,
            "dtype": used,
        }

    def open(self, req: dict) -> dict:
        self.evict()
        cid = req.get("challengeId")
        if cid not in self.kept:
            raise WorkerError("UNKNOWN_CHALLENGE", f"challenge {str(cid)[:128]} is not committed here (or expired)")
        _, n, product, levels = self.kept[cid]
        rows = req.get("rows")
        if (
            not isinstance(rows, list)
            or not rows
            or any(not isinstance(i, int) or isinstance(i, bool) or i < 0 or i >= n for i in rows)
            or len(set(rows)) != len(rows)
        ):
            raise WorkerError("INVALID_REQUEST", f"rows: distinct integers in [0, {n})")
        seed = req.get("freivaldsSeed")
        if not isinstance(seed, str) or len(seed) != 64:
            raise WorkerError("INVALID_REQUEST", "freivaldsSeed: 64 hex digits")
        r = freivalds_vector(self.torch, seed, n).numpy()
        # |C r| <= n^2 2^20 < 2^53: exact in int64.
        cr = product.astype("int64") @ r.astype("int64")
        del self.kept[cid]
        return {
            "ok": True,
            "rows": [{"index": i, "values": product[i].tolist(), "proof": proof(levels, i)} for i in rows],
            "product": cr.tolist(),
        }

    def warm(self, req: dict) -> dict:
        t = self.torch
        seen = []
        for spec in req.get("devices") or [{"index": 0}]:
            device, label = self.device(spec)
            for dtype in DTYPES:
                try:
                    dt, _ = self.compute_dtype(device, dtype)
                except WorkerError:
                    continue
                a = t.ones(64, 64, dtype=dt, device=device)
                t.matmul(a, a).float().cpu()
            seen.append(label)
        return {"ok": True, "devices": seen}

    def handle(self, req) -> dict:
        if not isinstance(req, dict):
            raise WorkerError("INVALID_REQUEST", "a request is a JSON object")
        op = req.get("op")
        if op == "commit":
            return self.commit(req)
        if op == "open":
            return self.open(req)
        if op == "warm":
            return self.warm(req)
        raise WorkerError("INVALID_REQUEST", "op: commit, open or warm")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ttl-seconds", type=float, default=300.0, help="how long an unopened commitment is kept")
    parser.add_argument("--threads", type=int, default=0, help="CPU threads for torch (0: torch's default)")
    args = parser.parse_args(argv)
    import torch

    if args.threads > 0:
        torch.set_num_threads(args.threads)
    worker = Worker(torch, args.ttl_seconds)
    out = sys.stdout
    out.write(json.dumps({"ready": True, "torch": torch.__version__, "cuda": worker.cuda_available()}) + "\n")
    out.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            answer = worker.handle(json.loads(line))
        except WorkerError as e:
            answer = {"ok": False, "code": e.code, "message": str(e)[:500]}
        except json.JSONDecodeError as e:
            answer = {"ok": False, "code": "INVALID_REQUEST", "message": f"not JSON: {e}"[:500]}
        except Exception as e:  # a fault of this host (out of memory, a driver error): said, not hidden
            answer = {"ok": False, "code": "FAILED", "message": f"{type(e).__name__}: {e}"[:500]}
        out.write(json.dumps(answer, separators=(",", ":")) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
