"""The gateway the int tests run against: started by clients/python/test/python-client.int.spec.ts,
which passes its URL, a tenant's key and its control endpoint in the environment."""

from __future__ import annotations

import json
import os
import urllib.request
from pathlib import Path
from typing import Any

from gpunet import Client

REPO = Path(__file__).resolve().parents[4]
EXAMPLE_15 = REPO / "docs" / "examples" / "15-multi-provider-ddp.yaml"


def env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(
            f"{name} is not set: the int tests run through `npx nx run python-client:test-int`, "
            "whose fixture (clients/python/test/python-client.int.spec.ts) starts the gateway"
        )
    return value


def client(**options: Any) -> Client:
    return Client(env("GPUNET_TEST_GATEWAY"), env("GPUNET_TEST_API_KEY"), **options)


def _control(method: str, path: str) -> dict[str, Any]:
    request = urllib.request.Request(f"{env('GPUNET_TEST_CONTROL')}{path}", method=method, data=b"" if method == "POST" else None)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read())  # type: ignore[no-any-return]
    except urllib.error.HTTPError as error:
        raise AssertionError(f"the stand-in's {method} {path} failed: {error.read().decode()}") from error


def start_lifecycle(job_id: str) -> None:
    """The cluster's part: funded → queued → placed → launching → running → logs → completed → settled,
    published onto the real streams while the test follows the job."""
    _control("POST", f"/jobs/{job_id}/lifecycle")


def await_lifecycle(job_id: str) -> None:
    """Returns once every event of the lifecycle is in the gateway's read model; raises if one failed."""
    _control("GET", f"/jobs/{job_id}/lifecycle")
