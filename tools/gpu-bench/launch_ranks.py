#!/usr/bin/env python3
"""Starts a job's ranks on this host as the edge's process runtime does, where Node is absent.

What a rank gets is what gpunet gives it (`rankEnv` in services/execution/src/domain/launch-spec.ts,
then `rankEnvironment` in services/provider-edge/src/infra/runtime/process.runtime.ts):

- only its own environment, never the edge's: the rendezvous variables (RANK, WORLD_SIZE, LOCAL_RANK,
  LOCAL_WORLD_SIZE, NODE_RANK, GROUP_RANK, MASTER_ADDR, MASTER_PORT), NCCL_IB_DISABLE=1, the GPUNET_*
  variables, the spec's own `env`, a default PATH;
- CUDA_VISIBLE_DEVICES (and NVIDIA_VISIBLE_DEVICES) set to the UUIDs of the GPUs reserved for it;
- its own session and process group (setsid), the repository root as working directory, no shell.

Without an overlay (one host, no job network) the socket interface variables are not set, as the
launch spec leaves them out when the network has no interface. Each rank's stdout and stderr go to
files under --out; one JSON summary line per rank is printed when all have exited or --timeout passed
(ranks still running then are killed with their process group).

    launch_ranks.py --ranks 2 --gpu GPU-… --out DIR -- /usr/bin/python3 docs/examples/jobs/ddp_train.py
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time

DEFAULT_RANK_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def rank_env(rank: int, world: int, gpus: list, master_port: int, job_id: str, extra: dict) -> dict:
    """The environment of rank `rank` of a one-node torchrun-framework allocation."""
    devices = ",".join(gpus)
    env = dict(extra)
    env.update(
        {
            "RANK": str(rank),
            "WORLD_SIZE": str(world),
            "LOCAL_RANK": str(rank),
            "LOCAL_WORLD_SIZE": str(world),
            "NODE_RANK": "0",
            "GROUP_RANK": "0",
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": str(master_port),
            "NCCL_IB_DISABLE": "1",
            "GPUNET_JOB_ID": job_id,
            "GPUNET_ATTEMPT": "1",
            "GPUNET_ALLOCATION": "ddp",
            "GPUNET_GLOBAL_RANK": str(rank),
            "GPUNET_NNODES": "1",
            "GPUNET_NPROC_PER_NODE": str(world),
            "GPUNET_RDZV_ENDPOINT": f"127.0.0.1:{master_port}",
            "GPUNET_RDZV_ID": f"{job_id}-1",
            "GPUNET_FRAMEWORK": "torchrun",
            "CUDA_VISIBLE_DEVICES": devices,
            "NVIDIA_VISIBLE_DEVICES": devices if devices else "void",
        }
    )
    env.setdefault("PATH", DEFAULT_RANK_PATH)
    return env


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--gpu", action="append", default=[], help="a reserved GPU's UUID, for every rank (repeatable)")
    ap.add_argument("--env", action="append", default=[], help="NAME=VALUE from the spec's env (repeatable)")
    ap.add_argument("--master-port", type=int, default=29511)
    ap.add_argument("--job-id", default="device-check")
    ap.add_argument("--out", required=True, help="folder for rank-<i>.stdout / .stderr")
    ap.add_argument("--cwd", default=".")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        ap.error("the rank's command follows --")
    extra = dict(e.split("=", 1) for e in args.env)
    os.makedirs(args.out, exist_ok=True)
    started = time.monotonic()
    children = []
    for rank in range(args.ranks):
        env = rank_env(rank, args.ranks, args.gpu, args.master_port, args.job_id, extra)
        out = open(os.path.join(args.out, f"rank-{rank}.stdout"), "wb")
        err = open(os.path.join(args.out, f"rank-{rank}.stderr"), "wb")
        child = subprocess.Popen(
            cmd, cwd=args.cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True
        )
        children.append((rank, child, out, err, env))
    deadline = started + args.timeout
    for rank, child, out, err, env in children:
        try:
            child.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
        out.close()
        err.close()
    code = 0
    for rank, child, _, _, env in children:
        print(
            json.dumps(
                {
                    "rank": rank,
                    "exit": child.returncode,
                    "CUDA_VISIBLE_DEVICES": env["CUDA_VISIBLE_DEVICES"],
                    "wall_s": round(time.monotonic() - started, 3),
                }
            ),
            flush=True,
        )
        code = code or (child.returncode if child.returncode else 0)
    return 1 if code else 0


if __name__ == "__main__":
    sys.exit(main())
