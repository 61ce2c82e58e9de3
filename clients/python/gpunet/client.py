"""The gateway's REST API (docs/api.md) for Python programs."""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Optional, TextIO, Union, cast
from urllib.parse import quote, urlencode, urlsplit

from . import models
from .errors import (
    FollowTimeout,
    GatewayUnreachable,
    NotFound,
    StreamFailed,
    UnexpectedResponse,
    error_from_problem,
)
from .events import SETTLED_OUTCOMES, JobEvent, LogChunk, event_from_frame
from .progress import ProgressPrinter
from .sse import SseEvent, SseParser
from .transport import HttpRequest, HttpResponse, Transport, UrllibTransport
from .version import __version__

__all__ = ["Client"]

#: Statuses worth another try: rate limited, and a gateway (or what is behind it) briefly away.
RETRY_STATUSES = frozenset({429, 502, 503, 504})
#: The gateway's key format (docs/api.md, Authentication).
API_KEY_PATTERN = re.compile(r"^gpn_[A-Za-z0-9]{12}_[A-Za-z0-9_-]{43}$")

Spec = Union[Mapping[str, Any], str, bytes]
Progress = Union[bool, TextIO, Callable[[JobEvent], None], None]


class _End:
    """The gateway's ``end`` frame: the job's final status, ``None`` when the job no longer exists."""

    def __init__(self, status: Optional[str]) -> None:
        self.status = status


def _path(*parts: str) -> str:
    return "/" + "/".join(quote(p, safe="") for p in parts)


def _json_body(response: HttpResponse, what: str) -> Any:
    try:
        return json.loads(response.body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise UnexpectedResponse(f"the gateway's answer to {what} is not JSON: {error}") from error


def _object(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise UnexpectedResponse(f"the gateway's answer to {what} is not a JSON object")
    return value


class Client:
    """A gpunet gateway, with one tenant's API key.

    ``Client("http://127.0.0.1:8080", "gpn_…")``; or :meth:`from_env` (``GPUNET_GATEWAY``,
    ``GPUNET_API_KEY``, as the ``gpunet`` CLI reads them).

    Every ``POST`` carries an ``Idempotency-Key`` (yours, or one made per call), so a request retried
    after a timeout or a 5xx is done once: the gateway answers a retry with the first response. GETs
    and keyed POSTs are retried on connection failures and on 429/502/503/504, after
    ``Retry-After`` when the gateway sends one, else after a delay that doubles from ``backoff``.
    Other errors raise the :mod:`gpunet.errors` class of their status at once.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = 30.0,
        stream_timeout: float = 60.0,
        retries: int = 2,
        backoff: float = 0.5,
        stream_retries: int = 5,
        transport: Optional[Transport] = None,
        sleep: Callable[[float], None] = time.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        """
        :param timeout: seconds to wait for an answer to one request. Default 30.
        :param stream_timeout: seconds an event stream may stay silent before it is reopened; the
            gateway sends a heartbeat every 15 s (``GATEWAY_SSE_HEARTBEAT``). Default 60.
        :param retries: further tries of a request after a retryable failure. Default 2.
        :param backoff: the first delay between tries, in seconds; doubles up to 8. Default 0.5.
        :param stream_retries: reconnects of an event stream in a row without receiving an event
            before :class:`~gpunet.errors.StreamFailed`. Default 5.
        :param transport: how requests go out; default ``urllib`` (tests pass a scripted one).
        :param sleep: how to wait between tries (tests pass a fake clock's).
        :param monotonic: the clock for deadlines (tests pass a fake clock's).
        """
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"base_url: {base_url!r} is not an http(s) URL of a gateway")
        if not isinstance(api_key, str) or not API_KEY_PATTERN.match(api_key):
            raise ValueError("api_key: is not a gpunet API key (gpn_<12 letters or digits>_<43 characters>)")
        for name, value in (("timeout", timeout), ("stream_timeout", stream_timeout), ("backoff", backoff)):
            if not value > 0:
                raise ValueError(f"{name}: must be more than 0 seconds, not {value!r}")
        for name, count in (("retries", retries), ("stream_retries", stream_retries)):
            if not isinstance(count, int) or count < 0:
                raise ValueError(f"{name}: must be a whole number ≥ 0, not {count!r}")
        self.base_url = base_url.rstrip("/")
        self._key = api_key
        self.timeout = timeout
        self.stream_timeout = stream_timeout
        self.retries = retries
        self.backoff = backoff
        self.stream_retries = stream_retries
        self._transport: Transport = transport or UrllibTransport()
        self._sleep = sleep
        self._monotonic = monotonic

    @classmethod
    def from_env(cls, **options: Any) -> "Client":
        """A client for ``GPUNET_GATEWAY`` with ``GPUNET_API_KEY``."""
        missing = [name for name in ("GPUNET_GATEWAY", "GPUNET_API_KEY") if not os.environ.get(name)]
        if missing:
            raise ValueError(f"{', '.join(missing)}: not set; export the gateway's URL and your API key")
        return cls(os.environ["GPUNET_GATEWAY"], os.environ["GPUNET_API_KEY"], **options)

    def __repr__(self) -> str:
        # Never the key: reprs end up in logs and tracebacks.
        return f"Client({self.base_url!r})"

    # -- requests ------------------------------------------------------------------------------

    def _headers(self, extra: Optional[Mapping[str, str]] = None) -> dict[str, str]:
        return {
            "authorization": f"Bearer {self._key}",
            "user-agent": f"gpunet-python/{__version__}",
            "accept": "application/json, application/problem+json",
            **(extra or {}),
        }

    def _url(self, path: str, query: Optional[Mapping[str, Any]] = None) -> str:
        pairs = {k: str(v) for k, v in (query or {}).items() if v is not None}
        return f"{self.base_url}{path}{'?' + urlencode(pairs) if pairs else ''}"

    def _delay(self, attempt: int, retry_after: Optional[str]) -> float:
        if retry_after is not None:
            try:
                return min(max(float(retry_after), 0.0), 60.0)
            except ValueError:
                pass
        return float(min(self.backoff * (2**attempt), 8.0))

    def _send(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Mapping[str, Any]] = None,
        body: Optional[bytes] = None,
        content_type: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> HttpResponse:
        extra: dict[str, str] = {}
        if body is not None:
            extra["content-type"] = content_type or "application/json"
        if method == "POST":
            # One key for every try of this call: what the gateway did once it replays.
            extra["idempotency-key"] = idempotency_key or f"py-{uuid.uuid4()}"
        request = HttpRequest(method, self._url(path, query), self._headers(extra), body)
        attempt = 0
        while True:
            try:
                response = self._transport.send(request, self.timeout)
            except OSError as error:
                if attempt >= self.retries:
                    raise GatewayUnreachable(
                        f"cannot reach the gateway at {self.base_url}: {error or type(error).__name__}"
                    ) from error
                self._sleep(self._delay(attempt, None))
                attempt += 1
                continue
            if response.status in RETRY_STATUSES and attempt < self.retries:
                self._sleep(self._delay(attempt, response.headers.get("retry-after")))
                attempt += 1
                continue
            if response.status >= 400:
                raise error_from_problem(response.status, response.body, response.headers.get("retry-after"))
            return response

    def _json(self, method: str, path: str, **options: Any) -> Any:
        return _json_body(self._send(method, path, **options), f"{method} {path}")

    # -- jobs ----------------------------------------------------------------------------------

    def submit(
        self,
        spec: Spec,
        *,
        format: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> models.Job:
        """Submits an ensemble spec (docs/ensemble-spec.md): a dict (sent as JSON) or YAML/JSON text.

        Text goes as it is, so the gateway's errors point at its lines and columns.

        :param format: ``"yaml"`` or ``"json"`` for text; default YAML (JSON text is YAML too).
        :param idempotency_key: retries with the same key and spec get the first job; default one
            per call.
        :raises ValidationError: the spec is invalid; ``errors`` names each field, line and column.
        """
        if isinstance(spec, Mapping):
            if format not in (None, "json"):
                raise ValueError(f"format: a dict is sent as JSON, not {format!r}")
            body, content_type = json.dumps(spec).encode("utf-8"), "application/json"
        elif isinstance(spec, (str, bytes)):
            if format not in (None, "yaml", "json"):
                raise ValueError(f"format: must be 'yaml' or 'json', not {format!r}")
            body = spec.encode("utf-8") if isinstance(spec, str) else spec
            content_type = "application/json" if format == "json" else "application/yaml"
        else:
            raise TypeError(f"spec: must be a dict or YAML/JSON text, not {type(spec).__name__}")
        job = self._json("POST", "/v1/jobs", body=body, content_type=content_type, idempotency_key=idempotency_key)
        return cast(models.Job, _object(job, "POST /v1/jobs"))

    def submit_file(self, path: Union[str, "os.PathLike[str]"], *, idempotency_key: Optional[str] = None) -> models.Job:
        """Submits the spec in a file: JSON when it ends in ``.json``, else YAML."""
        file = Path(path)
        return self.submit(
            file.read_bytes(),
            format="json" if file.suffix.lower() == ".json" else "yaml",
            idempotency_key=idempotency_key,
        )

    def get_job(self, job_id: str) -> models.Job:
        """The job: status, placement, ranks, usage and cost so far."""
        return cast(models.Job, _object(self._json("GET", _path("v1", "jobs", job_id)), "GET job"))

    def job_spec(self, job_id: str) -> dict[str, Any]:
        """The job's spec as the gateway normalized it."""
        return _object(self._json("GET", _path("v1", "jobs", job_id, "spec")), "GET job spec")

    def list_jobs(
        self,
        *,
        status: Union[str, list[str], tuple[str, ...], None] = None,
        subnet: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> models.JobList:
        """One page of the tenant's jobs, newest first; ``nextCursor`` asks for the next."""
        statuses = status if isinstance(status, (str, type(None))) else ",".join(status)
        query = {"status": statuses, "subnet": subnet, "limit": limit, "cursor": cursor}
        return cast(models.JobList, _object(self._json("GET", "/v1/jobs", query=query), "GET /v1/jobs"))

    def iter_jobs(self, **filters: Any) -> Iterator[models.Job]:
        """Every job that ``list_jobs(**filters)`` pages through."""
        cursor: Optional[str] = filters.pop("cursor", None)
        while True:
            page = self.list_jobs(cursor=cursor, **filters)
            yield from page["items"]
            cursor = page["nextCursor"]
            if cursor is None:
                return

    def cancel(self, job_id: str, reason: Optional[str] = None, *, idempotency_key: Optional[str] = None) -> models.Job:
        """Asks to cancel the job; execution stops its ranks. :raises Conflict: it has already ended."""
        body = json.dumps({} if reason is None else {"reason": reason}).encode("utf-8")
        job = self._json("POST", _path("v1", "jobs", job_id, "cancel"), body=body, idempotency_key=idempotency_key)
        return cast(models.Job, _object(job, "POST cancel"))

    def statement(self, job_id: str) -> models.JobStatement:
        """The job's money from settlement: escrow, payments, fees, refund and every ledger leg."""
        return cast(models.JobStatement, _object(self._json("GET", _path("v1", "jobs", job_id, "statement")), "GET statement"))

    # -- event streams -------------------------------------------------------------------------

    def _sse(self, path: str, query: Optional[Mapping[str, Any]], after: Optional[int], end_is_final: bool) -> Iterator[SseEvent]:
        """A stream's events across reconnects (``Last-Event-ID``), until the gateway's ``end``."""
        last_id: Optional[str] = None if after is None else str(after)
        failures = 0
        attempt = 0
        while True:
            headers = self._headers({"accept": "text/event-stream"})
            if last_id is not None:
                headers["last-event-id"] = last_id
            parser = SseParser()
            retry_after: Optional[str] = None
            try:
                stream = self._transport.open_stream(HttpRequest("GET", self._url(path, query), headers), self.stream_timeout)
            except OSError as error:
                reason = f"cannot reach the gateway at {self.base_url}: {error or type(error).__name__}"
            else:
                try:
                    if stream.status >= 400:
                        body = b""
                        while chunk := stream.read_chunk():
                            body += chunk
                        problem = error_from_problem(stream.status, body, stream.headers.get("retry-after"))
                        if stream.status not in RETRY_STATUSES:
                            raise problem
                        retry_after = stream.headers.get("retry-after")
                        reason = str(problem)
                    else:
                        while chunk := stream.read_chunk():
                            for event in parser.feed(chunk):
                                if event.event == "error":
                                    # The gateway's read failed; it closes next: resume after what came.
                                    continue
                                failures = 0
                                attempt = 0
                                if event.id is not None:
                                    last_id = event.id
                                yield event
                                if event.event == "end":
                                    return
                        if end_is_final:
                            return
                        reason = "the gateway closed the stream"
                except OSError as error:
                    reason = f"the stream broke: {error or type(error).__name__}"
                finally:
                    stream.close()
            failures += 1
            if failures > self.stream_retries:
                raise StreamFailed(f"the event stream {path} dropped {failures} times in a row ({reason}); giving up")
            wait = parser.retry_ms / 1000 if parser.retry_ms is not None else self._delay(attempt, retry_after)
            self._sleep(wait)
            attempt += 1

    def _frames(self, job_id: str, after: Optional[int]) -> Iterator[Union[JobEvent, _End]]:
        for e in self._sse(_path("v1", "jobs", job_id, "events"), None, after, False):
            data = json.loads(e.data)
            if e.event == "end":
                yield _End(data.get("status") if isinstance(data, dict) else None)
                return
            if isinstance(data, dict):
                yield event_from_frame(int(e.id) if e.id is not None and e.id.isdigit() else None, data)

    def events(self, job_id: str, *, after: Optional[int] = None) -> Iterator[JobEvent]:
        """The job's events: its history (after event ``after``), then live ones until it ends."""
        for item in self._frames(job_id, after):
            if isinstance(item, JobEvent):
                yield item

    def follow(
        self,
        job_id: str,
        *,
        after: Optional[int] = None,
        progress: Progress = False,
        settlement: bool = True,
        settlement_timeout: float = 300.0,
        poll_interval: float = 1.0,
    ) -> Iterator[JobEvent]:
        """The job's events until it has ended and — for a funded job that completed, failed or was
        cancelled — until settlement's ``job.settled`` (paid, fees, refund), which may come after
        the job's stream ended: then it is reopened after the last event every ``poll_interval``.

        :param progress: ``True`` prints one line per event on stderr; a text stream or a callable
            gets them instead. Default off.
        :param settlement: wait for ``job.settled``. Default True.
        :param settlement_timeout: seconds to wait for it once the job ended. Default 300.
        :raises FollowTimeout: no settlement in ``settlement_timeout``.
        :raises NotFound: the job does not exist (or no longer).
        """
        printer: Optional[Callable[[JobEvent], None]]
        if progress is True:
            printer = ProgressPrinter()
        elif progress is False or progress is None:
            printer = None
        elif callable(progress):
            printer = progress
        else:
            printer = ProgressPrinter(progress)
        last = after
        funded = False
        settled = False
        deadline: Optional[float] = None
        while True:
            end: Optional[_End] = None
            for item in self._frames(job_id, last):
                if isinstance(item, _End):
                    end = item
                    break
                last = item.seq
                funded = funded or item.type == "job.funded"
                settled = settled or item.type == "job.settled"
                if printer is not None:
                    printer(item)
                yield item
            if end is None or end.status is None:
                raise NotFound({"status": 404, "code": "NOT_FOUND", "detail": f"job {job_id} no longer exists"}, 404)
            if settled or not settlement or end.status not in SETTLED_OUTCOMES:
                return
            if not funded and after is not None:
                # Resumed past the start: whether it was funded is in the job's view.
                funded = self.get_job(job_id)["cost"]["escrow"] is not None
            if not funded:
                return
            now = self._monotonic()
            deadline = now + settlement_timeout if deadline is None else deadline
            if now >= deadline:
                raise FollowTimeout(f"job {job_id} {end.status}, but settlement did not settle it in {settlement_timeout} s")
            self._sleep(poll_interval)

    def wait(self, job_id: str, **follow: Any) -> models.Job:
        """Follows the job (``follow``'s options) to its end and settlement; returns its final view."""
        for _ in self.follow(job_id, **follow):
            pass
        return self.get_job(job_id)

    def logs(
        self,
        job_id: str,
        *,
        follow: bool = False,
        rank: Optional[int] = None,
        stream: Optional[str] = None,
        after: Optional[int] = None,
    ) -> Iterator[LogChunk]:
        """The ranks' output, chunk by chunk: what is stored, then (``follow``) new chunks until you
        stop iterating.

        :param rank: one rank's only. :param stream: ``"stdout"`` or ``"stderr"`` only.
        :param after: resume after this chunk (its ``id``).
        """
        if stream not in (None, "stdout", "stderr"):
            raise ValueError(f"stream: must be 'stdout' or 'stderr', not {stream!r}")
        query = {"follow": 1 if follow else 0, "rank": rank, "stream": stream}
        last = after if after is not None else 0
        for e in self._sse(_path("v1", "jobs", job_id, "logs"), query, after, not follow):
            if e.event != "log" or e.id is None or not e.id.isdigit():
                continue
            seq = int(e.id)
            if seq <= last:
                continue
            last = seq
            data = json.loads(e.data)
            if isinstance(data, dict):
                yield LogChunk.from_frame(seq, data)
