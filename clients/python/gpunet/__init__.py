"""gpunet: submit and follow jobs on a gpunet cluster through its gateway (docs/api.md).

    from gpunet import Client
    client = Client.from_env()
    job = client.submit_file("docs/examples/15-multi-provider-ddp.yaml")
    for event in client.follow(job["jobId"], progress=True):
        ...
"""

from . import models
from .client import Client
from .errors import (
    Conflict,
    FieldError,
    FollowTimeout,
    Forbidden,
    GatewayUnreachable,
    GpunetError,
    IdempotencyKeyReused,
    NotFound,
    PayloadTooLarge,
    ProblemError,
    RateLimited,
    ServerError,
    StreamFailed,
    Unauthorized,
    Unavailable,
    UnexpectedResponse,
    UnsupportedMediaType,
    ValidationError,
)
from .events import JobEvent, LogChunk
from .progress import ProgressPrinter, format_amount
from .version import __version__

__all__ = [
    "Client",
    "Conflict",
    "FieldError",
    "FollowTimeout",
    "Forbidden",
    "GatewayUnreachable",
    "GpunetError",
    "IdempotencyKeyReused",
    "JobEvent",
    "LogChunk",
    "NotFound",
    "PayloadTooLarge",
    "ProblemError",
    "ProgressPrinter",
    "RateLimited",
    "ServerError",
    "StreamFailed",
    "Unauthorized",
    "Unavailable",
    "UnexpectedResponse",
    "UnsupportedMediaType",
    "ValidationError",
    "__version__",
    "format_amount",
    "models",
]
