#!/usr/bin/env python3
"""Runs one test tier of the Python client with unittest and writes the JSON report the repository's
test summary adds up (scripts/summarize-tests.mjs reads vitest's JSON report format).

    python3 clients/python/tools/run_tests.py unit [--report reports/unit/python-client.json]
    python3 clients/python/tools/run_tests.py int [--report FILE] [tests.int.jobs_int_test ...]

A test's tier is its file name: ``*_unit_test.py``, ``*_int_test.py`` (the int tier needs the gateway
that clients/python/test/python-client.int.spec.ts starts; run it through ``nx run
python-client:test-int``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
import unittest
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


class _Recorder(unittest.TextTestResult):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.records: list[tuple[unittest.TestCase, str, list[str]]] = []

    def addSuccess(self, test: unittest.TestCase) -> None:
        super().addSuccess(test)
        self.records.append((test, "passed", []))

    def addFailure(self, test: unittest.TestCase, err: Any) -> None:
        super().addFailure(test, err)
        self.records.append((test, "failed", ["".join(traceback.format_exception(*err))]))

    def addError(self, test: unittest.TestCase, err: Any) -> None:
        super().addError(test, err)
        self.records.append((test, "failed", ["".join(traceback.format_exception(*err))]))

    def addSkip(self, test: unittest.TestCase, reason: str) -> None:
        super().addSkip(test, reason)
        self.records.append((test, "pending", [reason]))


def _report(records: list[tuple[unittest.TestCase, str, list[str]]]) -> dict[str, Any]:
    by_file: dict[str, list[dict[str, Any]]] = {}
    for test, status, messages in records:
        module = type(test).__module__
        name = str(ROOT / (module.replace(".", "/") + ".py")) if module.startswith("tests.") else module
        by_file.setdefault(name, []).append(
            {"fullName": test.id(), "title": test.id().rsplit(".", 1)[-1], "status": status, "failureMessages": messages}
        )
    count = lambda s: sum(1 for _, status, _ in records if status == s)  # noqa: E731
    return {
        "numPassedTests": count("passed"),
        "numFailedTests": count("failed"),
        "numPendingTests": count("pending"),
        "numTodoTests": 0,
        "success": count("failed") == 0,
        "testResults": [
            {
                "name": name,
                "status": "failed" if any(a["status"] == "failed" for a in results) else "passed",
                "message": "",
                "assertionResults": results,
            }
            for name, results in sorted(by_file.items())
        ],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="run one tier of the Python client's tests")
    parser.add_argument("tier", choices=["unit", "int"])
    parser.add_argument("--report", type=Path, help="write a vitest-style JSON report here")
    parser.add_argument("modules", nargs="*", help="dotted test modules (default: every one of the tier)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    loader = unittest.TestLoader()
    if args.modules:
        suite = loader.loadTestsFromNames(args.modules)
    else:
        suite = loader.discover(str(ROOT / "tests"), pattern=f"*_{args.tier}_test.py", top_level_dir=str(ROOT))
    if suite.countTestCases() == 0:
        print(f"no {args.tier} tests found under {ROOT / 'tests'}", file=sys.stderr)
        return 1
    runner = unittest.TextTestRunner(resultclass=_Recorder, verbosity=2, stream=sys.stderr)
    started = time.monotonic()
    result = runner.run(suite)
    if args.report:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        report = _report(result.records)  # type: ignore[attr-defined]
        report["durationMs"] = round((time.monotonic() - started) * 1000)
        args.report.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
