"""A transport that answers from a script, and a fake clock: the client's retries, keys and stream
resumption tested without a network or real waiting."""

from __future__ import annotations

import json
from typing import Any, Mapping, Optional, Union

from gpunet.transport import HttpRequest, HttpResponse

KEY = "gpn_AAAAAAAAAAAA_" + "s" * 43


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds

    def monotonic(self) -> float:
        return self.now


class FakeStream:
    def __init__(self, status: int, chunks: list[Union[bytes, OSError]], headers: Optional[Mapping[str, str]] = None) -> None:
        self.status = status
        self.headers = dict(headers or {})
        self._chunks = list(chunks)
        self.closed = False

    def read_chunk(self) -> bytes:
        if not self._chunks:
            return b""
        chunk = self._chunks.pop(0)
        if isinstance(chunk, OSError):
            raise chunk
        return chunk

    def close(self) -> None:
        self.closed = True


Answer = Union[HttpResponse, FakeStream, OSError]


class ScriptedTransport:
    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.requests: list[HttpRequest] = []
        self.streams: list[FakeStream] = []

    def _next(self, request: HttpRequest) -> Answer:
        self.requests.append(request)
        if not self.answers:
            raise AssertionError(f"no answer scripted for {request.method} {request.url}")
        answer = self.answers.pop(0)
        if isinstance(answer, OSError):
            raise answer
        return answer

    def send(self, request: HttpRequest, timeout: float) -> HttpResponse:
        answer = self._next(request)
        assert isinstance(answer, HttpResponse), f"{request.url}: a stream was scripted, not a response"
        return answer

    def open_stream(self, request: HttpRequest, timeout: float) -> FakeStream:
        answer = self._next(request)
        if isinstance(answer, HttpResponse):
            answer = FakeStream(answer.status, [answer.body], answer.headers)
        self.streams.append(answer)
        return answer


def ok(body: Any, status: int = 200, headers: Optional[Mapping[str, str]] = None) -> HttpResponse:
    return HttpResponse(status, dict(headers or {}), json.dumps(body).encode())


def problem(status: int, code: str, detail: str = "", headers: Optional[Mapping[str, str]] = None, **extra: Any) -> HttpResponse:
    body = {"type": "x", "title": "t", "status": status, "detail": detail, "instance": "/", "code": code, **extra}
    return HttpResponse(status, dict(headers or {}), json.dumps(body).encode())


def frame(event: str, data: Any, id: Optional[int] = None) -> bytes:
    return (f"id: {id}\n" if id is not None else "").encode() + f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def job_event(seq: int, type: str, data: Optional[Mapping[str, Any]] = None) -> bytes:
    return frame(type, {"eventId": f"e{seq}", "type": type, "occurredAt": f"2030-01-01T00:00:{seq:02d}.000Z", "data": data or {}}, seq)
