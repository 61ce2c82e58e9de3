"""Server-sent events: an incremental ``text/event-stream`` parser (WHATWG HTML, "Parsing an event stream")."""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from typing import Optional

__all__ = ["SseEvent", "SseParser"]


@dataclass(frozen=True)
class SseEvent:
    """One dispatched event."""

    #: The ``event:`` field; ``message`` when the event named none.
    event: str
    data: str
    #: The last event id seen on the stream so far (it persists across events, as the standard says).
    id: Optional[str]


class SseParser:
    """Feed it bytes in chunks of any size; it returns the events each chunk completes.

    Lines end with CRLF, LF or CR (a CR at a chunk's end waits for the next chunk to tell whether an
    LF follows); a leading BOM is dropped; ``:`` lines are comments (the gateway's heartbeats);
    ``data:`` lines join with LF; a blank line dispatches; an event without data is not dispatched;
    an ``id`` containing NUL is ignored; ``retry:`` takes digits only.
    """

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer = ""
        self._pending_cr = False
        self._first = True
        self._data: list[str] = []
        self._event = ""
        self._last_id: Optional[str] = None
        #: ``retry:`` in milliseconds, when the server sent one.
        self.retry_ms: Optional[int] = None

    @property
    def last_event_id(self) -> Optional[str]:
        return self._last_id

    def feed(self, chunk: bytes) -> list[SseEvent]:
        text = self._decoder.decode(chunk)
        if self._first and text:
            self._first = False
            if text.startswith("\ufeff"):
                text = text[1:]
        if self._pending_cr and text:
            self._pending_cr = False
            if text.startswith("\n"):
                text = text[1:]
        out: list[SseEvent] = []
        buf = self._buffer + text
        start = 0
        i = 0
        n = len(buf)
        while i < n:
            c = buf[i]
            if c == "\n" or c == "\r":
                self._line(buf[start:i], out)
                if c == "\r":
                    if i + 1 == n:
                        self._pending_cr = True
                    elif buf[i + 1] == "\n":
                        i += 1
                start = i + 1
            i += 1
        self._buffer = buf[start:]
        return out

    def _line(self, line: str, out: list[SseEvent]) -> None:
        if line == "":
            if self._data:
                out.append(SseEvent(self._event or "message", "\n".join(self._data), self._last_id))
            self._data = []
            self._event = ""
            return
        if line.startswith(":"):
            return
        field, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if field == "event":
            self._event = value
        elif field == "data":
            self._data.append(value)
        elif field == "id":
            if "\0" not in value:
                self._last_id = value
        elif field == "retry":
            if value.isascii() and value.isdigit():
                self.retry_ms = int(value)
