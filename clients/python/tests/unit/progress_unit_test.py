import io
import unittest

from gpunet.events import JobEvent
from gpunet.progress import ProgressPrinter, format_amount


def event(type: str, **data: object) -> JobEvent:
    return JobEvent(seq=1, type=type, event_id="e", occurred_at="2030-01-01T23:25:02.813Z", data=data)


class ProgressTest(unittest.TestCase):
    def test_amounts(self) -> None:
        for minor, decimals, text in [("700000", 6, "0.7"), ("1000000", 6, "1"), ("5554", 6, "0.005554"), ("12", None, "12"), (None, 6, "?")]:
            with self.subTest(minor=minor, decimals=decimals):
                self.assertEqual(format_amount(minor, decimals), text)

    def test_one_line_per_event_in_the_spec_s_asset(self) -> None:
        out = io.StringIO()
        printer = ProgressPrinter(out)
        node = {"providerId": "UB4LJULYTINYXXXX", "gpuUuids": ["a", "b"]}
        events = [
            event("job.submitted", gpus=4, subnetId="demo", asset="NTX", maxPricePerGpuHour="1000000", spec={"budget": {"decimals": 6}}),
            event("job.funded", escrow="713332"),
            event("job.queued", reason=None),
            event("job.placed", allocations=[{"nodes": [node]}]),
            event("job.launching", attempt=1, worldSize=4, masterAddr="10.88.0.12", masterPort=29500),
            event("job.running", attempt=1, runUntil="2030-01-01T23:35:02.813Z"),
            event("rank.exited", rank=0, exitCode=0),
            event("usage.reported", providers=[]),
            event("job.completed", usage=[{"gpuSeconds": 9}, {"gpuSeconds": 9}]),
            event("job.settled", paidToProviders="5554", subnetFees="276", platformFees="110", refunded="707392"),
            event("job.somethingnew"),
        ]
        for e in events:
            printer(e)
        self.assertEqual(
            out.getvalue().splitlines(),
            [
                "23:25:02 submitted: 4 GPUs in subnet demo, ≤ 1 NTX per GPU-hour",
                "23:25:02 funded: 0.713332 NTX in escrow",
                "23:25:02 queued: waiting for capacity",
                "23:25:02 placed on UB4LJULYTINY… (2 GPUs)",
                "23:25:02 launching attempt 1: 4 ranks starting (master 10.88.0.12:29500)",
                "23:25:02 running (attempt 1), until 2030-01-01T23:35:02.813Z at the latest",
                "23:25:02 rank 0 exited with code 0",
                "23:25:02 completed: 18 GPU-seconds",
                "23:25:02 settled: paid 0.005554 NTX to providers, fees 0.000386 NTX, refunded 0.707392 NTX",
                "23:25:02 job.somethingnew",
            ],
        )

    def test_a_failure_names_its_reason(self) -> None:
        line = ProgressPrinter().describe(event("job.failed", reason={"code": "RANK_FAILED", "message": "rank 3 exited with code 1"}, usage=[]))
        self.assertEqual(line, "failed: RANK_FAILED: rank 3 exited with code 1; no GPU time used")


if __name__ == "__main__":
    unittest.main()
