#!/usr/bin/env python3
"""A tiny DistributedDataParallel job that CI runs for real (docs/examples/09-cpu-gloo-ddp.yaml).

Each rank joins the process group by env:// rendezvous from the variables gpunet (or torchrun) sets:
RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (and LOCAL_RANK for the GPU). GPUNET_RENDEZVOUS_TIMEOUT_S
bounds the rendezvous (default 300 s). It trains a small linear
regression on a fixed synthetic dataset, sharded by rank, and prints one JSON line per step:

    {"event": "step", "rank": 0, "world_size": 2, "step": 3, "loss": 0.91, "backend": "gloo"}

The loss printed is the mean over all ranks (an all-reduce), so every rank prints the same curve.
The script exits 0 only if the loss fell: last loss < first loss × --min-ratio. Once it reported,
a teardown (barrier, destroy_process_group) that does not finish within GPUNET_TEARDOWN_TIMEOUT_S
(default 30 s) is abandoned: the rank exits with that result, saying so on stderr.

Backend (--backend auto): NCCL when CUDA is available (one GPU per rank, chosen by LOCAL_RANK),
Gloo otherwise. --backend gloo keeps the tensors on the GPU but all-reduces them through Gloo, which
lets several ranks share one GPU (NCCL refuses two ranks on one device). Each step line also says how
long the step took (step_s, the device synchronised before the clock is read).
Works with torch 1.13 (Debian's python3-torch) and newer.
"""

import argparse
import datetime
import json
import os
import sys
import threading
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def emit(**fields):
    print(json.dumps(fields), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch", type=int, default=64, help="samples per rank per step")
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--min-ratio", type=float, default=0.5, help="required last/first loss ratio")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--backend", choices=("auto", "gloo", "nccl"), default="auto")
    args = parser.parse_args()

    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        if name not in os.environ:
            print(f"ddp_train.py: {name} is not set; run under gpunet or torchrun", file=sys.stderr)
            return 2
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))

    use_cuda = torch.cuda.is_available()
    if args.backend == "nccl" and not use_cuda:
        print("ddp_train.py: --backend nccl needs CUDA, and torch sees no GPU", file=sys.stderr)
        return 2
    backend = ("nccl" if use_cuda else "gloo") if args.backend == "auto" else args.backend
    device = torch.device("cuda", local_rank % max(1, torch.cuda.device_count())) if use_cuda else torch.device("cpu")
    if use_cuda:
        torch.cuda.set_device(device)
    # Bounded rendezvous: a rank whose peers never come fails instead of waiting the default 30 min.
    timeout = datetime.timedelta(seconds=int(os.environ.get("GPUNET_RENDEZVOUS_TIMEOUT_S", "300")))
    dist.init_process_group(backend=backend, init_method="env://", rank=rank, world_size=world_size, timeout=timeout)

    # Same synthetic problem on every rank (fixed seed): y = X·w + b + noise.
    gen = torch.Generator().manual_seed(args.seed)
    features = 16
    true_w = torch.randn(features, 1, generator=gen)
    samples = args.batch * world_size * 8
    x_all = torch.randn(samples, features, generator=gen)
    y_all = x_all @ true_w + 0.5 + 0.01 * torch.randn(samples, 1, generator=gen)
    # This rank's shard.
    x = x_all[rank::world_size].to(device)
    y = y_all[rank::world_size].to(device)

    torch.manual_seed(args.seed)  # identical initial weights (DDP also broadcasts rank 0's)
    model = torch.nn.Linear(features, 1).to(device)
    ddp = DistributedDataParallel(model, device_ids=[device.index] if use_cuda else None)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=args.lr)
    loss_fn = torch.nn.MSELoss()

    first = last = None
    shard = x.shape[0]
    for step in range(args.steps):
        began = time.perf_counter()
        start = (step * args.batch) % shard
        xb, yb = x[start : start + args.batch], y[start : start + args.batch]
        optimizer.zero_grad()
        loss = loss_fn(ddp(xb), yb)
        loss.backward()  # DDP all-reduces the gradients here
        optimizer.step()

        mean_loss = loss.detach().clone()
        dist.all_reduce(mean_loss, op=dist.ReduceOp.SUM)
        value = mean_loss.item() / world_size  # .item() waits for the device
        step_s = time.perf_counter() - began
        first = value if first is None else first
        last = value
        emit(event="step", rank=rank, world_size=world_size, step=step, loss=round(value, 6), backend=backend,
             device=str(device), step_s=round(step_s, 6))

    fell = first is not None and last < first * args.min_ratio
    emit(event="done", rank=rank, world_size=world_size, first_loss=first, last_loss=last, loss_fell=fell)
    code = 0 if fell else 1
    # Training is over and reported: a teardown that hangs (a Gloo peer gone mid-destroy has been seen
    # to hold a rank for minutes) must not hold the rank, or its GPUs, any longer.
    grace = int(os.environ.get("GPUNET_TEARDOWN_TIMEOUT_S", "30"))

    def give_up():
        print(f"ddp_train.py: teardown did not finish within {grace} s; exiting", file=sys.stderr, flush=True)
        sys.stdout.flush()
        os._exit(code)

    watchdog = threading.Timer(grace, give_up)
    watchdog.daemon = True
    watchdog.start()
    dist.barrier()
    dist.destroy_process_group()
    watchdog.cancel()
    return code


if __name__ == "__main__":
    sys.exit(main())
