"""One rank of a Gloo all-reduce job (torch.distributed), for the overlay's tests and benchmark.

Reads RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (env:// rendezvous) and GLOO_SOCKET_IFNAME like any
torch job; ITERS all-reduces of NUMEL float32 (default 1 of 1 Mi), PAUSE_MS between them (default 0),
TIMEOUT_S for the process group.
Prints one JSON line per event: ready, iter (with its duration in ms and whether the sum was right),
done. Run with Debian's /usr/bin/python3, which has torch.
"""
import datetime
import json
import os
import sys
import time

import torch
import torch.distributed as dist


def emit(**fields):
    print(json.dumps(fields), flush=True)


rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
iters = int(os.environ.get("ITERS", "1"))
numel = int(os.environ.get("NUMEL", str(1 << 20)))
timeout = float(os.environ.get("TIMEOUT_S", "60"))
pause = float(os.environ.get("PAUSE_MS", "0")) / 1000

dist.init_process_group(
    "gloo", init_method="env://", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=timeout)
)
emit(event="ready", rank=rank)
tensor = torch.zeros(numel, dtype=torch.float32)
expected = world * (world + 1) / 2
for i in range(iters):
    tensor.fill_(rank + 1)
    start = time.perf_counter()
    dist.all_reduce(tensor)
    ms = (time.perf_counter() - start) * 1000
    ok = bool(torch.all(tensor == expected))
    emit(event="iter", rank=rank, i=i, ms=round(ms, 3), ok=ok)
    if not ok:
        sys.exit(3)
    if pause > 0:
        time.sleep(pause)
dist.barrier()
emit(event="done", rank=rank)
