#!/usr/bin/env python3
"""One rank's NCCL check: joins the process group by env:// rendezvous, all-reduces known tensors on
its GPU and says whether the sums are right, in one JSON line per size and a final one.

Rank r contributes (r + 1) · [0, 1, …, n−1] (float32, exact below 2^24), so the sum every rank must
hold is W(W+1)/2 · [0, …, n−1]. With one rank (all one GPU allows) NCCL still builds its communicator
and runs the kernel; the check is that it returns the tensor unchanged. Exits 0 only if every sum is
right. `--backend gloo` runs the same check through Gloo (on CUDA tensors where torch sees a GPU).
"""

import argparse
import datetime
import json
import os
import sys
import time

import torch
import torch.distributed as dist


def emit(**fields):
    print(json.dumps(fields), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=("nccl", "gloo"), default="nccl")
    ap.add_argument("--sizes", default="1024,1048576,67108864", help="elements per all-reduce")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", "0"))
    on_gpu = torch.cuda.is_available()
    if not on_gpu and args.backend == "nccl":
        emit(event="done", rank=rank, ok=False, reason="torch sees no GPU")
        return 3
    # Gloo without a GPU (a dry run): the same check on CPU tensors.
    device = torch.device("cuda", local % torch.cuda.device_count()) if on_gpu else torch.device("cpu")
    sync = (lambda: torch.cuda.synchronize(device)) if on_gpu else (lambda: None)
    if on_gpu:
        torch.cuda.set_device(device)
    began = time.perf_counter()
    dist.init_process_group(
        backend=args.backend, init_method="env://", rank=rank, world_size=world,
        timeout=datetime.timedelta(seconds=120),
    )
    init_s = time.perf_counter() - began
    factor = world * (world + 1) / 2
    all_ok = True
    for n in (int(s) for s in args.sizes.split(",")):
        base = torch.arange(n, dtype=torch.float32, device=device) % (1 << 24)
        times = []
        ok = True
        for _ in range(args.repeats):
            x = base * (rank + 1)
            sync()
            t0 = time.perf_counter()
            dist.all_reduce(x, op=dist.ReduceOp.SUM)
            sync()
            times.append(time.perf_counter() - t0)
            ok = ok and bool(torch.equal(x, base * factor))
        all_ok = all_ok and ok
        emit(event="all-reduce", rank=rank, world_size=world, backend=args.backend, elements=n,
             bytes=n * 4, ok=ok, best_s=round(min(times), 6), first_s=round(times[0], 6))
    emit(event="done", rank=rank, world_size=world, backend=args.backend, ok=all_ok,
         init_s=round(init_s, 3), device=str(device), name=torch.cuda.get_device_name(device) if on_gpu else "cpu",
         nccl=".".join(map(str, torch.cuda.nccl.version())) if args.backend == "nccl" else None,
         torch=torch.__version__, cuda=torch.version.cuda)
    dist.destroy_process_group()
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
