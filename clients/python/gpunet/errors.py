"""What can go wrong in a call, by failure mode.

The gateway answers every error with an RFC 9457 problem document (``application/problem+json``:
``type``, ``title``, ``status``, ``detail``, ``instance``, gpunet's ``code`` and, where fields are at
fault, ``errors[]``). :func:`error_from_problem` turns one into the exception class of its status, so
callers branch on the class (or on ``code``), never on message text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping, Optional

__all__ = [
    "Conflict",
    "FieldError",
    "Forbidden",
    "FollowTimeout",
    "GatewayUnreachable",
    "GpunetError",
    "IdempotencyKeyReused",
    "NotFound",
    "PayloadTooLarge",
    "ProblemError",
    "RateLimited",
    "ServerError",
    "StreamFailed",
    "UnexpectedResponse",
    "Unauthorized",
    "Unavailable",
    "UnsupportedMediaType",
    "ValidationError",
    "error_from_problem",
]


class GpunetError(Exception):
    """The base of every error this client raises."""

    code: str = "GPUNET_ERROR"


@dataclass(frozen=True)
class FieldError:
    """One field at fault, as the problem's ``errors[]`` names it."""

    path: str
    message: str
    code: Optional[str] = None
    #: Where in a submitted spec (1-based), when the gateway located it.
    line: Optional[int] = None
    column: Optional[int] = None

    def __str__(self) -> str:
        where = ""
        if self.line is not None:
            where = f" (line {self.line}" + (f", column {self.column}" if self.column is not None else "") + ")"
        code = f" [{self.code}]" if self.code else ""
        return f"{self.path or '(root)'}{where}: {self.message}{code}"


class ProblemError(GpunetError):
    """The gateway refused the request: an HTTP error status with its problem document."""

    def __init__(self, problem: Mapping[str, Any], status: int) -> None:
        self.problem: Mapping[str, Any] = problem
        self.status: int = status
        self.code = str(problem.get("code") or f"HTTP_{status}")
        self.title: str = str(problem.get("title") or "")
        self.detail: str = str(problem.get("detail") or "")
        self.instance: Optional[str] = problem.get("instance") if isinstance(problem.get("instance"), str) else None
        self.errors: tuple[FieldError, ...] = tuple(_field_errors(problem.get("errors")))
        super().__init__(self._describe())

    @property
    def fields(self) -> tuple[str, ...]:
        """The paths of the fields at fault (``budget``, ``allocations.ddp.resources.gpus.count``)."""
        return tuple(e.path for e in self.errors)

    def _describe(self) -> str:
        head = self.detail or self.title or "the gateway refused the request"
        lines = [f"HTTP {self.status} {self.code}: {head}"]
        lines.extend(f"  {e}" for e in self.errors)
        return "\n".join(lines)


class ValidationError(ProblemError):
    """400: the request or the submitted spec is invalid; ``errors`` names each field and why."""


class Unauthorized(ProblemError):
    """401: the API key is missing, malformed, unknown or revoked."""


class Forbidden(ProblemError):
    """403: the API key lacks the scope the operation needs (``read``, ``submit``, ``admin``)."""


class NotFound(ProblemError):
    """404: no such job (or another tenant's: the gateway never says which)."""


class Conflict(ProblemError):
    """409: the resource's state forbids it (cancelling a job that has ended)."""


class PayloadTooLarge(ProblemError):
    """413: the body is over the gateway's limit (``GATEWAY_BODY_LIMIT_BYTES``)."""


class UnsupportedMediaType(ProblemError):
    """415: the body's content type is not one the operation takes."""


class IdempotencyKeyReused(ProblemError):
    """422: the ``Idempotency-Key`` was used before with another request body."""


class RateLimited(ProblemError):
    """429: over the key's rate limit; ``retry_after`` is the gateway's ``Retry-After`` in seconds."""

    def __init__(self, problem: Mapping[str, Any], status: int, retry_after: Optional[float] = None) -> None:
        super().__init__(problem, status)
        self.retry_after = retry_after


class ServerError(ProblemError):
    """5xx: the gateway failed (its detail reveals nothing internal)."""


class Unavailable(ServerError):
    """503: a service behind the gateway did not answer, or too many event streams are open."""


class GatewayUnreachable(GpunetError):
    """No HTTP answer at all: connection refused, DNS, a timeout."""

    code = "UNREACHABLE"


class UnexpectedResponse(GpunetError):
    """An answer this client does not understand (not JSON, not the documented shape)."""

    code = "UNEXPECTED_RESPONSE"


class StreamFailed(GpunetError):
    """An event stream dropped more times in a row than allowed, or the gateway said it failed."""

    code = "STREAM_FAILED"


class FollowTimeout(GpunetError):
    """Following a job did not reach what was awaited (its settlement) in the time given."""

    code = "FOLLOW_TIMEOUT"


_BY_STATUS: dict[int, type[ProblemError]] = {
    400: ValidationError,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    415: UnsupportedMediaType,
    422: IdempotencyKeyReused,
    429: RateLimited,
    503: Unavailable,
}


def _field_errors(raw: object) -> list[FieldError]:
    if not isinstance(raw, list):
        return []
    out = []
    for item in raw:
        if not isinstance(item, Mapping):
            continue
        line, column = item.get("line"), item.get("column")
        out.append(
            FieldError(
                path=str(item.get("path", "")),
                message=str(item.get("message", "")),
                code=str(item["code"]) if item.get("code") is not None else None,
                line=line if isinstance(line, int) else None,
                column=column if isinstance(column, int) else None,
            )
        )
    return out


def _retry_after(value: Optional[str]) -> Optional[float]:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def error_from_problem(status: int, body: bytes, retry_after: Optional[str] = None) -> ProblemError:
    """The exception for an HTTP error answer; a body that is not a problem document still maps by status."""
    problem: Mapping[str, Any]
    try:
        parsed = json.loads(body.decode("utf-8")) if body else None
    except (UnicodeDecodeError, ValueError):
        parsed = None
    if isinstance(parsed, Mapping):
        problem = parsed
    else:
        # A proxy's page or an empty body: keep the start of the text as the detail.
        text = body[:200].decode("utf-8", "replace").strip()
        problem = {"status": status, "detail": text or f"HTTP {status} without a problem document"}
    cls = _BY_STATUS.get(status) or (ServerError if status >= 500 else ProblemError)
    if cls is RateLimited:
        return RateLimited(problem, status, _retry_after(retry_after))
    return cls(problem, status)
