#!/usr/bin/env python3
"""An MPI-launched, Horovod-style data-parallel job that CI runs for real (docs/examples/13-cpu-mpi-hostfile.yaml).

It runs unchanged under either launcher:

* gpunet (framework: mpi or horovod) starts one process per rank itself and gives each the Open MPI
  environment (OMPI_COMM_WORLD_RANK / _SIZE / _LOCAL_RANK), the hostfile in $GPUNET_HOSTFILE (lines
  `<host> slots=<n>`; either the path of the file or, when it is not a file, its text) and
  MASTER_ADDR / MASTER_PORT;
* Open MPI's own `mpirun -np N --hostfile HOSTFILE python3 mpi_train.py --hostfile HOSTFILE --port P`,
  which sets the same OMPI_COMM_WORLD_* variables but no MASTER_*: then the rendezvous host is the
  hostfile's first host (as for Horovod, rank 0 runs on the first slot) and the port is --port.

Rank, size and local rank come from OMPI_COMM_WORLD_*; the ranks then meet in torch.distributed by
env:// rendezvous (GPUNET_RENDEZVOUS_TIMEOUT_S bounds it, default 300 s). The hostfile must offer at
least as many slots as there are ranks. Training is Horovod's recipe written out: rank 0's initial
weights are broadcast (each rank starts from different ones), every step the gradients are averaged
by an all-reduce before the optimizer step. One JSON line per event:

    {"event": "step", "rank": 0, "world_size": 2, "step": 3, "loss": 0.91, "launcher": "gpunet", ...}

Checks, each of which makes the exit status non-zero when it fails: an all-reduce of rank + 1 sums to
N(N+1)/2, the loss falls (last < first × --min-ratio), and at the end every rank holds the very same
weights. Backend: NCCL when CUDA is available (one GPU per local rank), Gloo otherwise. Works with
torch 1.13 (Debian's python3-torch) and newer.
"""

import argparse
import datetime
import json
import os
import sys

import torch
import torch.distributed as dist


def emit(**fields):
    print(json.dumps(fields), flush=True)


def fail(message):
    print(f"mpi_train.py: {message}", file=sys.stderr, flush=True)
    return 2


def read_hostfile(source):
    """[(host, slots)] from an Open MPI hostfile — a path, or the text itself when it contains a
    line break or `slots=` and is no file: `<host> [slots=<n>]` per line, # comments."""
    path = source
    if os.path.isfile(source):
        with open(source, encoding="utf-8") as f:
            text = f.read()
    elif "\n" in source or "slots=" in source:
        path, text = "$GPUNET_HOSTFILE", source
    else:
        raise ValueError(f"{source}: no such file")
    hosts = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        host, *options = line.split()
        slots = 1
        for option in options:
            key, _, value = option.partition("=")
            if key == "slots":  # max_slots and others do not change how many ranks fit
                if not value.isdigit() or int(value) < 1:
                    raise ValueError(f"{path}:{number}: slots must be a positive integer, got {value!r}")
                slots = int(value)
        hosts.append((host, slots))
    if not hosts:
        raise ValueError(f"{path}: no hosts")
    return hosts


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch", type=int, default=64, help="samples per rank per step")
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--min-ratio", type=float, default=0.5, help="required last/first loss ratio")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hostfile", help="hostfile when $GPUNET_HOSTFILE is not set (under mpirun)")
    parser.add_argument("--port", type=int, default=29500, help="rendezvous port when $MASTER_PORT is not set")
    args = parser.parse_args()

    for name in ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"):
        if name not in os.environ:
            return fail(f"{name} is not set; launch with mpirun, or under gpunet with framework mpi/horovod")
    rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
    world_size = int(os.environ["OMPI_COMM_WORLD_SIZE"])
    local_rank = int(os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK", "0"))
    # gpunet also sets the torchrun variables; they must describe the same rank.
    if "RANK" in os.environ and (int(os.environ["RANK"]), int(os.environ.get("WORLD_SIZE", world_size))) != (rank, world_size):
        return fail(f"RANK/WORLD_SIZE {os.environ['RANK']}/{os.environ.get('WORLD_SIZE')} disagree with OMPI_COMM_WORLD_* {rank}/{world_size}")

    launcher = "gpunet" if "GPUNET_HOSTFILE" in os.environ else "mpirun"
    hostfile = os.environ.get("GPUNET_HOSTFILE") or args.hostfile
    if hostfile is None:
        return fail("no hostfile: $GPUNET_HOSTFILE is not set and --hostfile was not given")
    try:
        hosts = read_hostfile(hostfile)
    except (OSError, ValueError) as error:
        return fail(f"cannot read the hostfile: {error}")
    slots = sum(n for _, n in hosts)
    if slots < world_size:
        return fail(f"the hostfile offers {slots} slots for {world_size} ranks: {hostfile!r}")

    # torch.distributed's env:// rendezvous: gpunet's MASTER_* if given, else the first host.
    os.environ.setdefault("MASTER_ADDR", hosts[0][0])
    os.environ.setdefault("MASTER_PORT", str(args.port))
    use_cuda = torch.cuda.is_available()
    backend = "nccl" if use_cuda else "gloo"
    device = torch.device("cuda", local_rank % max(1, torch.cuda.device_count())) if use_cuda else torch.device("cpu")
    if use_cuda:
        torch.cuda.set_device(device)
    timeout = datetime.timedelta(seconds=int(os.environ.get("GPUNET_RENDEZVOUS_TIMEOUT_S", "300")))
    dist.init_process_group(backend=backend, init_method="env://", rank=rank, world_size=world_size, timeout=timeout)
    emit(
        event="joined",
        rank=rank,
        world_size=world_size,
        local_rank=local_rank,
        launcher=launcher,
        hosts=[h for h, _ in hosts],
        slots=slots,
        master=f"{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}",
        backend=backend,
    )

    # Communication check: every rank contributes rank + 1.
    total = torch.tensor([float(rank + 1)], device=device)
    dist.all_reduce(total, op=dist.ReduceOp.SUM)
    expected = world_size * (world_size + 1) / 2
    allreduce_ok = total.item() == expected
    emit(event="allreduce", rank=rank, world_size=world_size, sum=total.item(), expected=expected, ok=allreduce_ok)

    # Same synthetic problem on every rank: y = X·w + b + noise; this rank trains on its shard.
    gen = torch.Generator().manual_seed(args.seed)
    features = 16
    true_w = torch.randn(features, 1, generator=gen)
    samples = args.batch * world_size * 8
    x_all = torch.randn(samples, features, generator=gen)
    y_all = x_all @ true_w + 0.5 + 0.01 * torch.randn(samples, 1, generator=gen)
    x = x_all[rank::world_size].to(device)
    y = y_all[rank::world_size].to(device)

    torch.manual_seed(args.seed + rank)  # deliberately different weights per rank…
    model = torch.nn.Linear(features, 1).to(device)
    for p in model.parameters():  # …until rank 0's are broadcast (hvd.broadcast_parameters)
        dist.broadcast(p.data, src=0)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)

    first = last = None
    shard = x.shape[0]
    for step in range(args.steps):
        start = (step * args.batch) % shard
        xb, yb = x[start : start + args.batch], y[start : start + args.batch]
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(xb), yb)
        loss.backward()
        for p in model.parameters():  # hvd.DistributedOptimizer: average the gradients
            dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)
            p.grad /= world_size
        optimizer.step()

        mean_loss = loss.detach().clone().reshape(1)
        dist.all_reduce(mean_loss, op=dist.ReduceOp.SUM)
        value = mean_loss.item() / world_size
        first = value if first is None else first
        last = value
        emit(event="step", rank=rank, world_size=world_size, step=step, loss=round(value, 6), launcher=launcher, backend=backend)

    # Consistency: the element-wise max and min of the weights over all ranks are the same tensor.
    flat = torch.nn.utils.parameters_to_vector(model.parameters()).detach()
    high, low = flat.clone(), flat.clone()
    dist.all_reduce(high, op=dist.ReduceOp.MAX)
    dist.all_reduce(low, op=dist.ReduceOp.MIN)
    in_sync = torch.equal(high, low)
    fell = first is not None and last < first * args.min_ratio
    emit(
        event="done",
        rank=rank,
        world_size=world_size,
        launcher=launcher,
        first_loss=first,
        last_loss=last,
        loss_fell=fell,
        allreduce_ok=allreduce_ok,
        weights_in_sync=in_sync,
    )
    dist.barrier()
    dist.destroy_process_group()
    return 0 if fell and allreduce_ok and in_sync else 1


if __name__ == "__main__":
    sys.exit(main())
