"""Follow to settled, logs, the statement and a late cancel: the cluster's events are published onto
the real JetStream streams by the fixture while this follows the gateway's SSE stream."""

import io
import unittest

from gpunet import Conflict, models
from tests.support.conforms import assert_conforms
from tests.support.gateway import EXAMPLE_15, await_lifecycle, client, start_lifecycle

LIFECYCLE = [
    "job.submitted",
    "job.funded",
    "job.queued",
    "job.placed",
    "job.launching",
    "job.running",
    "job.completed",
    "job.settled",
]


class FollowTest(unittest.TestCase):
    def test_follows_a_job_to_settled_then_reads_its_logs_and_statement(self) -> None:
        c = client()
        job = c.submit_file(EXAMPLE_15)
        start_lifecycle(job["jobId"])
        progress = io.StringIO()
        events = list(c.follow(job["jobId"], progress=progress, poll_interval=0.05, settlement_timeout=30))
        await_lifecycle(job["jobId"])

        self.assertEqual([e.type for e in events], LIFECYCLE)
        self.assertEqual([e.seq for e in events], sorted(e.seq for e in events))
        self.assertEqual(events[-1].data["refunded"], "694060")
        lines = progress.getvalue().splitlines()
        self.assertEqual(len(lines), len(LIFECYCLE))
        self.assertTrue(lines[-1].endswith("settled: paid 0.005554 NTX to providers, fees 0.000386 NTX, refunded 0.69406 NTX"), lines[-1])

        final = c.get_job(job["jobId"])
        assert_conforms(final, models.Job)
        self.assertEqual(final["status"], "completed")
        self.assertEqual(final["cost"]["settled"]["refunded"], "694060")  # type: ignore[index]

        # Following again reads the whole history, settled included, without waiting.
        self.assertEqual([e.type for e in c.follow(job["jobId"])], LIFECYCLE)
        self.assertEqual([e.type for e in c.follow(job["jobId"], after=events[5].seq)], LIFECYCLE[6:])

        chunks = list(c.logs(job["jobId"]))
        self.assertEqual([(ch.rank, ch.stream, ch.seq) for ch in chunks], [(0, "stdout", 1), (2, "stdout", 1)])
        self.assertIn('"loss": 19.4', chunks[0].lines[0])
        self.assertEqual([ch.rank for ch in c.logs(job["jobId"], rank=2)], [2])
        self.assertEqual(list(c.logs(job["jobId"], after=chunks[0].id)), chunks[1:])

        statement = c.statement(job["jobId"])
        assert_conforms(statement, models.JobStatement)
        self.assertEqual(
            (statement["status"], statement["funded"], statement["paidToProviders"], statement["refunded"]),
            ("settled", "700000", "5554", "694060"),
        )

        with self.assertRaises(Conflict) as caught:
            c.cancel(job["jobId"])
        self.assertEqual((caught.exception.status, caught.exception.code), (409, "CONFLICT"))


if __name__ == "__main__":
    unittest.main()
