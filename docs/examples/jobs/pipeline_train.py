#!/usr/bin/env python3
"""A model split across ranks, activations sent between them, that CI runs for real (docs/examples/12-cpu-model-parallel.yaml).

Model parallelism (a pipeline of stages): an MLP is cut into WORLD_SIZE consecutive stages and rank i
holds only stage i. Every step, rank 0 runs its stage on the batch and sends the activations to
rank 1 (torch.distributed send/recv), which runs the next stage, and so on; the last rank computes
the loss, and the gradients with respect to the activations travel back the same way, each stage
running its own backward pass and its own optimizer. No rank ever holds the whole model.

Each rank joins the process group by env:// rendezvous from the variables gpunet (or torchrun) sets:
RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (and LOCAL_RANK for the GPU). GPUNET_RENDEZVOUS_TIMEOUT_S
bounds the rendezvous (default 300 s). Every rank prints one JSON line per step:

    {"event": "step", "rank": 0, "world_size": 2, "step": 3, "loss": 0.91, "sent": ["activations"], ...}

The loss is the last stage's, broadcast to all, so every rank prints the same curve. At the end rank
0 trains the same, whole model (same initial weights and batches) in one process and checks that the
pipeline reproduced its loss curve: that proves activations and gradients crossed intact. The script
exits 0 only if the loss fell (last < first × --min-ratio), every stage's weights moved, and (rank 0)
the pipeline matched the single-process reference.

Backend: NCCL when CUDA is available (one GPU per rank, chosen by LOCAL_RANK), Gloo otherwise.
Works with torch 1.13 (Debian's python3-torch) and newer.
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


def build_stages(world_size, features, hidden, seed):
    """The whole model as WORLD_SIZE stages, built identically on every rank (fixed seed)."""
    torch.manual_seed(seed)
    stages = []
    for i in range(world_size):
        width_in = features if i == 0 else hidden
        if i == world_size - 1:
            stages.append(torch.nn.Linear(width_in, 1))
        else:
            stages.append(torch.nn.Sequential(torch.nn.Linear(width_in, hidden), torch.nn.Tanh()))
    return stages


def dataset(seed, samples, features):
    """A fixed synthetic, non-linear regression problem: y = tanh(X·a)·b + noise."""
    gen = torch.Generator().manual_seed(seed)
    a = torch.randn(features, 8, generator=gen) / features**0.5
    b = torch.randn(8, 1, generator=gen)
    x = torch.randn(samples, features, generator=gen)
    y = torch.tanh(x @ a) @ b + 0.01 * torch.randn(samples, 1, generator=gen)
    return x, y


def batch(x, y, step, size):
    start = (step * size) % x.shape[0]
    return x[start : start + size], y[start : start + size]


def reference_curve(args, world_size, features, x, y):
    """The same training in one process: what the pipeline must reproduce."""
    model = torch.nn.Sequential(*build_stages(world_size, features, args.hidden, args.seed))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    curve = []
    for step in range(args.steps):
        xb, yb = batch(x, y, step, args.batch)
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(xb), yb)
        loss.backward()
        optimizer.step()
        curve.append(loss.item())
    return curve


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--min-ratio", type=float, default=0.5, help="required last/first loss ratio")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        if name not in os.environ:
            print(f"pipeline_train.py: {name} is not set; run under gpunet or torchrun", file=sys.stderr)
            return 2
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if world_size < 2:
        print("pipeline_train.py: a pipeline needs at least 2 ranks (WORLD_SIZE)", file=sys.stderr)
        return 2

    use_cuda = torch.cuda.is_available()
    backend = "nccl" if use_cuda else "gloo"
    device = torch.device("cuda", local_rank % max(1, torch.cuda.device_count())) if use_cuda else torch.device("cpu")
    if use_cuda:
        torch.cuda.set_device(device)
    # Bounded rendezvous: a rank whose peers never come fails instead of waiting the default 30 min.
    timeout = datetime.timedelta(seconds=int(os.environ.get("GPUNET_RENDEZVOUS_TIMEOUT_S", "300")))
    dist.init_process_group(backend=backend, init_method="env://", rank=rank, world_size=world_size, timeout=timeout)

    features = 16
    x, y = dataset(args.seed, args.batch * 16, features)
    first_stage, last_stage = rank == 0, rank == world_size - 1
    # Build all stages (so that every rank draws the same initial weights), keep only this rank's.
    stage = build_stages(world_size, features, args.hidden, args.seed)[rank].to(device)
    initial = torch.nn.utils.parameters_to_vector(stage.parameters()).detach().clone()
    optimizer = torch.optim.SGD(stage.parameters(), lr=args.lr)
    activation_shape = (args.batch, args.hidden)

    # What crosses this rank's links each step: activations forward, their gradients back.
    sent = ([] if last_stage else ["activations"]) + ([] if first_stage else ["gradients"])
    received = ([] if first_stage else ["activations"]) + ([] if last_stage else ["gradients"])
    curve = []
    for step in range(args.steps):
        xb, yb = batch(x, y, step, args.batch)
        optimizer.zero_grad()
        # Forward: receive the previous stage's activations (a leaf that collects their gradient).
        if first_stage:
            inputs = xb.to(device)
        else:
            inputs = torch.empty(activation_shape, device=device)
            dist.recv(inputs, src=rank - 1)
            inputs.requires_grad_(True)
        out = stage(inputs)
        loss = torch.zeros((), device=device)
        if last_stage:
            loss = torch.nn.functional.mse_loss(out, yb.to(device))
            loss.backward()
        else:
            dist.send(out.detach().contiguous(), dst=rank + 1)
            # Backward: the next stage sends d(loss)/d(our output); finish the chain rule here.
            grad = torch.empty_like(out)
            dist.recv(grad, src=rank + 1)
            out.backward(grad)
        if not first_stage:
            dist.send(inputs.grad.contiguous(), dst=rank - 1)
        optimizer.step()

        shared = loss.detach().clone().reshape(1)
        dist.broadcast(shared, src=world_size - 1)
        value = shared.item()
        curve.append(value)
        emit(
            event="step",
            rank=rank,
            world_size=world_size,
            step=step,
            loss=round(value, 6),
            stage=rank,
            sent=sent,
            received=received,
            backend=backend,
        )

    moved = (torch.nn.utils.parameters_to_vector(stage.parameters()).detach() - initial).norm().item()
    fell = curve[-1] < curve[0] * args.min_ratio
    ok = fell and moved > 0
    done = dict(
        event="done",
        rank=rank,
        world_size=world_size,
        first_loss=curve[0],
        last_loss=curve[-1],
        loss_fell=fell,
        weights_moved=round(moved, 6),
    )
    if first_stage:
        reference = reference_curve(args, world_size, features, x, y)
        gap = max(abs(a - b) for a, b in zip(curve, reference))
        matches = gap <= 1e-4 * max(1.0, abs(reference[0]))
        done.update(reference_last_loss=reference[-1], reference_gap=gap, matches_reference=matches)
        ok = ok and matches
    emit(**done)
    dist.barrier()
    dist.destroy_process_group()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
