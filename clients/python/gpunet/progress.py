"""A job's progress for people: one line per event, as ``gpunet job follow`` prints them.

Off in library use: pass ``progress=True`` (stderr) or a text stream to :meth:`gpunet.Client.follow`.
"""

from __future__ import annotations

import sys
from typing import Any, Mapping, Optional, TextIO

from .events import JobEvent

__all__ = ["ProgressPrinter", "format_amount"]


def format_amount(minor: object, decimals: Optional[int]) -> str:
    """Minor units as a decimal amount: ``700000`` with 6 decimals is ``0.7``."""
    if not isinstance(minor, str) or not minor.isdigit():
        return "?"
    if not decimals:
        return minor
    whole, frac = divmod(int(minor), 10**decimals)
    text = str(frac).rjust(decimals, "0").rstrip("0")
    return f"{whole}.{text}" if text else str(whole)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _short(provider_id: object) -> str:
    text = str(provider_id)
    return f"{text[:12]}…" if len(text) > 12 else text


def _usage(providers: object) -> str:
    if not isinstance(providers, list) or not providers:
        return "no GPU time used"
    total = sum(int(p.get("gpuSeconds", 0)) for p in providers if isinstance(p, Mapping))
    return f"{total} GPU-seconds"


class ProgressPrinter:
    """Writes ``HH:MM:SS <what happened>`` for each event it is given; events people need not see
    are left out."""

    def __init__(self, stream: Optional[TextIO] = None) -> None:
        self._stream = stream
        self._asset = ""
        self._decimals: Optional[int] = None

    def __call__(self, event: JobEvent) -> None:
        line = self.describe(event)
        if line is None:
            return
        time = event.occurred_at[11:19] if len(event.occurred_at) >= 19 else ""
        out = self._stream if self._stream is not None else sys.stderr
        out.write(f"{time + ' ' if time else ''}{line}\n")
        out.flush()

    def _money(self, minor: object) -> str:
        return f"{format_amount(minor, self._decimals)} {self._asset}".strip()

    def describe(self, event: JobEvent) -> Optional[str]:
        d: Mapping[str, Any] = event.data
        t = event.type
        if t == "job.submitted":
            self._asset = str(d.get("asset", ""))
            budget = (d.get("spec") or {}).get("budget") if isinstance(d.get("spec"), Mapping) else None
            decimals = budget.get("decimals") if isinstance(budget, Mapping) else None
            self._decimals = decimals if isinstance(decimals, int) else None
            return (
                f"submitted: {_plural(int(d.get('gpus', 0)), 'GPU')} in subnet {d.get('subnetId')}, "
                f"≤ {self._money(d.get('maxPricePerGpuHour'))} per GPU-hour"
            )
        if t == "job.funded":
            return f"funded: {self._money(d.get('escrow'))} in escrow"
        if t == "escrow.rejected":
            return f"rejected: {d.get('reason')}: {d.get('message')}"
        if t == "job.queued":
            return f"queued: {d.get('reason') or 'waiting for capacity'}"
        if t == "job.placed":
            nodes = [n for a in d.get("allocations", []) for n in a.get("nodes", [])]
            where = ", ".join(f"{_short(n.get('providerId'))} ({_plural(len(n.get('gpuUuids', [])), 'GPU')})" for n in nodes)
            return f"placed on {where}"
        if t == "job.launching":
            return (
                f"launching attempt {d.get('attempt')}: {_plural(int(d.get('worldSize', 0)), 'rank')} starting "
                f"(master {d.get('masterAddr')}:{d.get('masterPort')})"
            )
        if t == "job.running":
            return f"running (attempt {d.get('attempt')}), until {d.get('runUntil')} at the latest"
        if t == "job.restarting":
            return f"restarting as attempt {d.get('attempt')}"
        if t == "rank.exited":
            how = f"on signal {d.get('signal')}" if d.get("signal") else f"with code {d.get('exitCode')}"
            return f"rank {d.get('rank')} exited {how}"
        if t == "job.cancel-requested":
            return f"cancel requested{': ' + str(d['reason']) if d.get('reason') else ''}"
        if t == "job.completed":
            return f"completed: {_usage(d.get('usage'))}"
        if t == "job.failed":
            reason = d.get("reason") if isinstance(d.get("reason"), Mapping) else {}
            return f"failed: {reason.get('code')}: {reason.get('message')}; {_usage(d.get('usage'))}"
        if t == "job.cancelled":
            return f"cancelled: {_usage(d.get('usage'))}"
        if t == "job.unschedulable":
            return f"unschedulable ({d.get('code')}): {d.get('message')}"
        if t == "usage.metered":
            return f"cost so far: {self._money(d.get('accrued'))}"
        if t == "job.settled":
            fees = str(int(d.get("subnetFees", "0")) + int(d.get("platformFees", "0")))
            return (
                f"settled: paid {self._money(d.get('paidToProviders'))} to providers, fees {self._money(fees)}, "
                f"refunded {self._money(d.get('refunded'))}"
            )
        if t in ("usage.reported", "overlay.paths-reported"):
            return None
        return t
