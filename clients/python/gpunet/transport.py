"""HTTP over the standard library (``urllib``): one request, or one streamed response.

The client never talks to sockets itself: tests hand it another :class:`Transport` that answers from a
script, so retries, idempotency keys and stream resumption are tested without a network.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Mapping, Optional, Protocol

__all__ = ["HttpRequest", "HttpResponse", "StreamResponse", "Transport", "UrllibTransport"]


@dataclass(frozen=True)
class HttpRequest:
    method: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    body: Optional[bytes] = None


@dataclass(frozen=True)
class HttpResponse:
    status: int
    #: Header names in lower case.
    headers: Mapping[str, str]
    body: bytes


class StreamResponse(Protocol):
    """An open response whose body is read as it arrives."""

    status: int
    headers: Mapping[str, str]

    def read_chunk(self) -> bytes:
        """What has arrived (at least one byte), ``b""`` at the end; raises ``OSError`` on a timeout."""
        ...

    def close(self) -> None: ...


class Transport(Protocol):
    def send(self, request: HttpRequest, timeout: float) -> HttpResponse:
        """The whole answer, error statuses included; ``OSError`` when none came."""
        ...

    def open_stream(self, request: HttpRequest, timeout: float) -> StreamResponse:
        """The answer with its body unread (an error status's body is read by the caller)."""
        ...


def _lower(headers: object) -> dict[str, str]:
    items = headers.items() if hasattr(headers, "items") else []
    return {str(k).lower(): str(v) for k, v in items}


class _UrllibStream:
    def __init__(self, raw: object, status: int, headers: Mapping[str, str]) -> None:
        self._raw = raw
        self.status = status
        self.headers = headers

    def read_chunk(self) -> bytes:
        # read1 returns what one read of the socket gave (chunked transfer decoded): events arrive
        # as the gateway writes them instead of after a full buffer.
        return self._raw.read1(65536)  # type: ignore[attr-defined, no-any-return]

    def close(self) -> None:
        self._raw.close()  # type: ignore[attr-defined]


class UrllibTransport:
    """The default transport: ``urllib.request`` with the environment's proxy settings."""

    def __init__(self) -> None:
        # Redirects are not followed silently: an API key must not travel to another origin.
        self._opener = urllib.request.build_opener(_NoRedirect())

    def _open(self, request: HttpRequest, timeout: float) -> object:
        req = urllib.request.Request(request.url, data=request.body, method=request.method, headers=dict(request.headers))
        try:
            return self._opener.open(req, timeout=timeout)
        except urllib.error.HTTPError as error:
            return error
        except urllib.error.URLError as error:
            reason = error.reason
            raise reason if isinstance(reason, OSError) else OSError(str(reason)) from error

    def send(self, request: HttpRequest, timeout: float) -> HttpResponse:
        raw = self._open(request, timeout)
        try:
            return HttpResponse(raw.status, _lower(raw.headers), raw.read())  # type: ignore[attr-defined]
        finally:
            raw.close()  # type: ignore[attr-defined]

    def open_stream(self, request: HttpRequest, timeout: float) -> StreamResponse:
        raw = self._open(request, timeout)
        return _UrllibStream(raw, raw.status, _lower(raw.headers))  # type: ignore[attr-defined]


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None
