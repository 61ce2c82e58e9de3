#!/usr/bin/env python3
"""A gRPC parameter server and its workers, that CI runs for real (docs/examples/14-cpu-grpc-parameter-server.yaml).

Rank 0 is the parameter server: it holds the model's weights and serves them over gRPC on
MASTER_PORT (or --port) on every interface. Ranks 1…N-1 are workers: each connects to
MASTER_ADDR:port, and every step pulls the current weights, computes the gradient of the loss on its
own shard of the data and pushes it; the server applies each gradient as it arrives (asynchronous
SGD, as in the classic parameter-server design), so a worker's gradient may be a few versions stale.

The wire format needs no generated code: four unary methods of the service
`gpunet.examples.ParameterServer` (Join, Pull, Push, Done; Join answers once all workers are there,
so that all start from the initial weights), each message a 4-byte big-endian length, a
UTF-8 JSON header of that length, then optionally a raw little-endian float32 array (weights or
gradient). No pickle: nothing from the network is executed.

gpunet sets RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT (LOCAL_RANK picks a worker's GPU, when
there is one); GPUNET_RENDEZVOUS_TIMEOUT_S (default 300 s) bounds how long a worker waits for the
server and how long the server waits without hearing from any worker. One JSON line per event:

    {"event": "update", "rank": 0, "version": 7, "worker": 2, "step": 3, "loss": 0.91, "staleness": 1}
    {"event": "step", "rank": 2, "world_size": 3, "step": 3, "loss": 0.91, "version": 6}

A worker exits 0 only if its loss fell (last < first × --min-ratio); the server only if every worker
reported Done and the workers' mean loss fell likewise. Workers compute on the GPU when CUDA is
available, on the CPU otherwise; the parameter server itself needs none.
"""

import argparse
import json
import os
import struct
import sys
import threading
import time
from concurrent import futures

import grpc
import torch

SERVICE = "gpunet.examples.ParameterServer"
# No pickle, no protobuf codegen: raw bytes in, raw bytes out.
_RAW = dict(request_deserializer=None, response_serializer=None)


def emit(**fields):
    print(json.dumps(fields), flush=True)


def encode(header, floats=None):
    head = json.dumps(header).encode("utf-8")
    body = b"" if floats is None else floats.detach().to("cpu", torch.float32).contiguous().numpy().astype("<f4").tobytes()
    return struct.pack(">I", len(head)) + head + body


def decode(message):
    """(header dict, float32 tensor or None); ValueError on a malformed message."""
    if len(message) < 4:
        raise ValueError("message shorter than its length prefix")
    (size,) = struct.unpack(">I", message[:4])
    if 4 + size > len(message):
        raise ValueError("header length beyond the message")
    header = json.loads(message[4 : 4 + size].decode("utf-8"))
    if not isinstance(header, dict):
        raise ValueError("header is not a JSON object")
    body = message[4 + size :]
    if len(body) % 4 != 0:
        raise ValueError("float32 payload length is not a multiple of 4")
    # Little-endian on the wire; every platform torch ships for is little-endian too.
    floats = torch.frombuffer(bytearray(body), dtype=torch.float32).clone() if body else None
    return header, floats


def make_model(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))


def dataset(seed, samples):
    """A fixed synthetic regression problem, identical on every rank: y = tanh(X·a)·b + noise."""
    gen = torch.Generator().manual_seed(seed)
    a = torch.randn(16, 8, generator=gen) / 4
    b = torch.randn(8, 1, generator=gen)
    x = torch.randn(samples, 16, generator=gen)
    return x, torch.tanh(x @ a) @ b + 0.01 * torch.randn(samples, 1, generator=gen)


class ParameterServer:
    """The weights, a version counter and what the workers reported; every method is thread-safe."""

    def __init__(self, weights, lr, workers, timeout_s):
        self.timeout_s = timeout_s
        self.lock = threading.Lock()
        self.weights = weights
        self.version = 0
        self.lr = lr
        self.workers = workers
        self.losses = {}  # worker → [loss per step, in push order]
        self.done = {}  # worker → its Done header
        self.joined = set()
        self.all_joined = threading.Condition(self.lock)
        self.finished = threading.Event()
        self.last_heard = time.monotonic()

    def _worker(self, header):
        worker = header.get("worker")
        if not isinstance(worker, int) or not 1 <= worker <= self.workers:
            raise ValueError(f"worker must be an integer in 1..{self.workers}, got {worker!r}")
        return worker

    def join(self, request, context):
        return self._guard(context, lambda: self._join(request, context))

    def _join(self, request, context):
        """Answers once every worker has joined, so that all start from the initial weights."""
        header, _ = decode(request)
        worker = self._worker(header)
        with self.lock:
            self.last_heard = time.monotonic()
            self.joined.add(worker)
            self.all_joined.notify_all()
            ready = self.all_joined.wait_for(
                lambda: len(self.joined) == self.workers or not context.is_active(),
                timeout=min(context.time_remaining() or self.timeout_s, self.timeout_s),
            )
            return encode({"ready": ready and len(self.joined) == self.workers, "workers": self.workers})

    def pull(self, request, context):
        return self._guard(context, lambda: self._pull(request))

    def _pull(self, request):
        header, _ = decode(request)
        self._worker(header)
        with self.lock:
            self.last_heard = time.monotonic()
            return encode({"version": self.version}, self.weights)

    def push(self, request, context):
        return self._guard(context, lambda: self._push(request))

    def _push(self, request):
        header, grad = decode(request)
        worker = self._worker(header)
        if grad is None or grad.numel() != self.weights.numel():
            raise ValueError(f"gradient must have {self.weights.numel()} float32 values")
        loss, step, base = header.get("loss"), header.get("step"), header.get("version")
        if not isinstance(loss, (int, float)) or not isinstance(step, int) or not isinstance(base, int):
            raise ValueError("push needs numeric loss, integer step and integer version")
        if not torch.isfinite(grad).all():
            raise ValueError("gradient has non-finite values")
        with self.lock:
            self.last_heard = time.monotonic()
            self.weights -= self.lr * grad
            self.version += 1
            self.losses.setdefault(worker, []).append(float(loss))
            version = self.version
            # Under the lock, so that the lines come out in version order.
            emit(event="update", rank=0, version=version, worker=worker, step=step, loss=round(loss, 6), staleness=version - 1 - base)
        return encode({"version": version})

    def finish(self, request, context):
        return self._guard(context, lambda: self._finish(request))

    def _finish(self, request):
        header, _ = decode(request)
        worker = self._worker(header)
        with self.lock:
            self.last_heard = time.monotonic()
            self.done[worker] = header
            if len(self.done) == self.workers:
                self.finished.set()
        return encode({"ok": True})

    @staticmethod
    def _guard(context, handler):
        try:
            return handler()
        except (ValueError, UnicodeDecodeError) as error:  # json.JSONDecodeError is a ValueError
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))


def serve(args, world_size, port, timeout_s):
    workers = world_size - 1
    weights = torch.nn.utils.parameters_to_vector(make_model(args.seed).parameters()).detach().clone()
    ps = ParameterServer(weights, args.lr, workers, timeout_s)
    # so_reuseport off: a second server on a taken port must fail, not share it silently.
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=max(4, workers * 2)),
        options=[("grpc.so_reuseport", 0)],
    )
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                SERVICE,
                {
                    "Join": grpc.unary_unary_rpc_method_handler(ps.join, **_RAW),
                    "Pull": grpc.unary_unary_rpc_method_handler(ps.pull, **_RAW),
                    "Push": grpc.unary_unary_rpc_method_handler(ps.push, **_RAW),
                    "Done": grpc.unary_unary_rpc_method_handler(ps.finish, **_RAW),
                },
            ),
        )
    )
    address = f"{args.bind}:{port}"
    try:
        bound = server.add_insecure_port(address)
    except RuntimeError as error:  # newer grpcio raises; older returns 0
        bound = 0
        print(f"grpc_ps.py: {error}", file=sys.stderr)
    if bound == 0:
        print(f"grpc_ps.py: cannot bind {address}: address already in use (or not available)", file=sys.stderr, flush=True)
        return 3
    server.start()
    emit(event="serving", rank=0, world_size=world_size, address=address, parameters=weights.numel(), workers=workers)

    # Wait for every worker's Done; give up when no worker has spoken for the rendezvous timeout.
    while not ps.finished.wait(0.5):
        with ps.lock:
            silent = time.monotonic() - ps.last_heard
        if silent > timeout_s:
            print(f"grpc_ps.py: no worker heard from for {timeout_s} s; {len(ps.done)}/{workers} done", file=sys.stderr)
            server.stop(0)
            return 1
    server.stop(grace=1).wait()

    with ps.lock:
        curves = [ps.losses.get(w, []) for w in range(1, workers + 1)]
        version = ps.version
    if any(not c for c in curves):
        print("grpc_ps.py: a worker finished without pushing", file=sys.stderr)
        return 1
    first = sum(c[0] for c in curves) / workers
    last = sum(c[-1] for c in curves) / workers
    fell = last < first * args.min_ratio
    emit(event="done", rank=0, world_size=world_size, role="server", updates=version, first_loss=first, last_loss=last, loss_fell=fell)
    return 0 if fell else 1


def work(args, rank, world_size, host, port, timeout_s):
    workers = world_size - 1
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    use_cuda = torch.cuda.is_available()
    device = torch.device("cuda", local_rank % max(1, torch.cuda.device_count())) if use_cuda else torch.device("cpu")
    x_all, y_all = dataset(args.seed, args.batch * workers * 8)
    x = x_all[rank - 1 :: workers].to(device)  # this worker's shard
    y = y_all[rank - 1 :: workers].to(device)
    model = make_model(args.seed).to(device)  # shapes only: the weights come from the server

    # Loopback or the job network: never a proxy from the environment.
    channel = grpc.insecure_channel(f"{host}:{port}", options=[("grpc.enable_http_proxy", 0)])
    try:
        grpc.channel_ready_future(channel).result(timeout=timeout_s)
    except grpc.FutureTimeoutError:
        print(f"grpc_ps.py: parameter server {host}:{port} not reachable within {timeout_s} s", file=sys.stderr)
        return 1
    join = channel.unary_unary(f"/{SERVICE}/Join")
    pull = channel.unary_unary(f"/{SERVICE}/Pull")
    push = channel.unary_unary(f"/{SERVICE}/Push")
    done = channel.unary_unary(f"/{SERVICE}/Done")
    emit(event="connected", rank=rank, world_size=world_size, server=f"{host}:{port}", device=str(device))
    header, _ = decode(join(encode({"worker": rank}), timeout=timeout_s))
    if not header.get("ready"):
        print(f"grpc_ps.py: not all {workers} workers joined within {timeout_s} s", file=sys.stderr)
        return 1

    first = last = None
    shard = x.shape[0]
    for step in range(args.steps):
        header, weights = decode(pull(encode({"worker": rank}), timeout=timeout_s))
        torch.nn.utils.vector_to_parameters(weights.to(device), model.parameters())
        start = (step * args.batch) % shard
        xb, yb = x[start : start + args.batch], y[start : start + args.batch]
        model.zero_grad()
        loss = torch.nn.functional.mse_loss(model(xb), yb)
        loss.backward()
        grad = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
        value = loss.item()
        push(encode({"worker": rank, "step": step, "version": header["version"], "loss": value}, grad), timeout=timeout_s)
        first = value if first is None else first
        last = value
        emit(event="step", rank=rank, world_size=world_size, step=step, loss=round(value, 6), version=header["version"])

    fell = first is not None and last < first * args.min_ratio
    done(encode({"worker": rank, "first_loss": first, "last_loss": last}), timeout=timeout_s)
    channel.close()
    emit(event="done", rank=rank, world_size=world_size, role="worker", first_loss=first, last_loss=last, loss_fell=fell)
    return 0 if fell else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40, help="steps per worker")
    parser.add_argument("--batch", type=int, default=64, help="samples per worker per step")
    parser.add_argument("--lr", type=float, default=0.2)
    parser.add_argument("--min-ratio", type=float, default=0.5, help="required last/first loss ratio")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--port", type=int, help="server port (default: $MASTER_PORT)")
    parser.add_argument("--bind", default="0.0.0.0", help="address the server listens on")
    args = parser.parse_args()

    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR") + (() if args.port else ("MASTER_PORT",)):
        if name not in os.environ:
            print(f"grpc_ps.py: {name} is not set; run under gpunet (framework custom or torchrun)", file=sys.stderr)
            return 2
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    if world_size < 2:
        print("grpc_ps.py: needs a server and at least one worker (WORLD_SIZE >= 2)", file=sys.stderr)
        return 2
    port = args.port or int(os.environ["MASTER_PORT"])
    timeout_s = int(os.environ.get("GPUNET_RENDEZVOUS_TIMEOUT_S", "300"))
    if rank == 0:
        return serve(args, world_size, port, timeout_s)
    return work(args, rank, world_size, os.environ["MASTER_ADDR"], port, timeout_s)


if __name__ == "__main__":
    sys.exit(main())
