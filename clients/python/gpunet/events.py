"""What the event streams carry. The OpenAPI document describes these streams as ``text/event-stream``
without a schema, so their frames are declared here, from the gateway's SSE frames (`sse.ts`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

__all__ = ["JobEvent", "LogChunk", "SETTLED_OUTCOMES", "TERMINAL_STATUSES"]

#: A job in one of these has ended: its event stream closes once everything was sent.
TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled", "rejected", "unschedulable"})
#: Settlement settles a funded job that ended so (``job.settled``): paid, fees, refund.
SETTLED_OUTCOMES = frozenset({"completed", "failed", "cancelled"})


@dataclass(frozen=True)
class JobEvent:
    """One event of a job's history (``GET /v1/jobs/{id}/events``)."""

    #: The job's own event number: the SSE ``id``, to resume after.
    seq: int
    #: ``job.submitted``, ``job.funded`` … ``job.settled`` (libs/contracts' catalog).
    type: str
    event_id: str
    occurred_at: str
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class LogChunk:
    """Lines one rank wrote (``GET /v1/jobs/{id}/logs``)."""

    #: The chunk's place in the gateway's log stream: the SSE ``id``, to resume after.
    id: int
    job_id: str
    attempt: int
    rank: int
    stream: str
    #: Per (job, attempt, rank, stream), from 1.
    seq: int
    lines: tuple[str, ...]
    #: Lines lost to back-pressure before this chunk.
    dropped: int
    at: str

    @staticmethod
    def from_frame(id: int, data: Mapping[str, Any]) -> "LogChunk":
        return LogChunk(
            id=id,
            job_id=str(data.get("jobId", "")),
            attempt=int(data.get("attempt", 0)),
            rank=int(data.get("rank", 0)),
            stream=str(data.get("stream", "")),
            seq=int(data.get("seq", 0)),
            lines=tuple(str(line) for line in data.get("lines", [])),
            dropped=int(data.get("dropped", 0)),
            at=str(data.get("at", "")),
        )


def event_from_frame(seq: Optional[int], data: Mapping[str, Any]) -> JobEvent:
    return JobEvent(
        seq=seq if seq is not None else int(data.get("seq") or 0),
        type=str(data.get("type", "")),
        event_id=str(data.get("eventId", "")),
        occurred_at=str(data.get("occurredAt", "")),
        data=data.get("data") if isinstance(data.get("data"), Mapping) else {},
    )
