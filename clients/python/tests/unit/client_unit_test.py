import io
import json
import unittest

from gpunet import Client, errors
from tests.support.scripted import KEY, FakeClock, FakeStream, ScriptedTransport, frame, job_event, ok, problem

JOB = {"jobId": "j1", "status": "submitted", "cost": {"escrow": None}}


def client(transport: ScriptedTransport, clock: FakeClock, **options: object) -> Client:
    return Client("http://gw.test/", KEY, transport=transport, sleep=clock.sleep, monotonic=clock.monotonic, **options)  # type: ignore[arg-type]


class RequestsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.clock = FakeClock()

    def test_the_options_are_checked_each_by_name(self) -> None:
        cases = [
            (("ftp://gw", KEY), {}, "base_url: 'ftp://gw' is not an http(s) URL"),
            (("http://gw", "secret"), {}, "api_key: is not a gpunet API key"),
            (("http://gw", KEY), {"timeout": 0}, "timeout: must be more than 0 seconds"),
            (("http://gw", KEY), {"retries": -1}, "retries: must be a whole number ≥ 0"),
        ]
        for args, options, message in cases:
            with self.subTest(message):
                with self.assertRaises(ValueError) as caught:
                    Client(*args, **options)  # type: ignore[arg-type]
                self.assertIn(message, str(caught.exception))

    def test_the_key_goes_as_a_bearer_token_and_never_into_repr(self) -> None:
        transport = ScriptedTransport(ok(JOB))
        c = client(transport, self.clock)
        c.get_job("j 1")
        request = transport.requests[0]
        self.assertEqual(request.url, "http://gw.test/v1/jobs/j%201")
        self.assertEqual(request.headers["authorization"], f"Bearer {KEY}")
        self.assertNotIn(KEY, repr(c))

    def test_a_dict_is_sent_as_json_and_text_as_yaml(self) -> None:
        transport = ScriptedTransport(ok(JOB, 202), ok(JOB, 202), ok(JOB, 202))
        c = client(transport, self.clock)
        c.submit({"kind": "Ensemble"})
        c.submit("kind: Ensemble\n")
        c.submit('{"kind": "Ensemble"}', format="json")
        types = [(r.headers["content-type"], r.body) for r in transport.requests]
        self.assertEqual(
            types,
            [
                ("application/json", b'{"kind": "Ensemble"}'),
                ("application/yaml", b"kind: Ensemble\n"),
                ("application/json", b'{"kind": "Ensemble"}'),
            ],
        )
        with self.assertRaisesRegex(ValueError, "format: must be 'yaml' or 'json'"):
            c.submit("x", format="toml")
        with self.assertRaisesRegex(TypeError, "spec: must be a dict or YAML/JSON text"):
            c.submit(42)  # type: ignore[arg-type]

    def test_a_retried_post_keeps_its_idempotency_key(self) -> None:
        transport = ScriptedTransport(ConnectionResetError("reset"), problem(503, "UPSTREAM_UNAVAILABLE"), ok(JOB, 202))
        job = client(transport, self.clock).submit("kind: Ensemble\n")
        self.assertEqual(job["jobId"], "j1")
        keys = {r.headers["idempotency-key"] for r in transport.requests}
        self.assertEqual(len(transport.requests), 3)
        self.assertEqual(len(keys), 1)
        self.assertTrue(next(iter(keys)).startswith("py-"))
        self.assertEqual(self.clock.slept, [0.5, 1.0])

    def test_each_call_has_its_own_key_unless_given(self) -> None:
        transport = ScriptedTransport(ok(JOB, 202), ok(JOB, 202), ok(JOB, 202))
        c = client(transport, self.clock)
        c.cancel("j1")
        c.cancel("j1")
        c.cancel("j1", "wrong data", idempotency_key="run-42")
        keys = [r.headers["idempotency-key"] for r in transport.requests]
        self.assertNotEqual(keys[0], keys[1])
        self.assertEqual(keys[2], "run-42")
        self.assertEqual(json.loads(transport.requests[2].body or b""), {"reason": "wrong data"})

    def test_retry_after_is_honoured(self) -> None:
        transport = ScriptedTransport(problem(429, "RATE_LIMITED", headers={"retry-after": "2"}), ok({"items": [], "nextCursor": None}))
        client(transport, self.clock).list_jobs(status=["running", "queued"], limit=5)
        self.assertEqual(self.clock.slept, [2.0])
        self.assertEqual(transport.requests[1].url, "http://gw.test/v1/jobs?status=running%2Cqueued&limit=5")

    def test_a_refusal_is_not_retried(self) -> None:
        transport = ScriptedTransport(problem(400, "INVALID_SPEC", "bad", errors=[{"path": "budget", "message": "a job needs a budget"}]))
        with self.assertRaises(errors.ValidationError) as caught:
            client(transport, self.clock).submit("kind: Ensemble\n")
        self.assertEqual(caught.exception.fields, ("budget",))
        self.assertEqual(len(transport.requests), 1)

    def test_retries_end_in_the_error_of_the_last_answer(self) -> None:
        transport = ScriptedTransport(problem(503, "UPSTREAM_UNAVAILABLE", "settlement did not answer"), problem(503, "UPSTREAM_UNAVAILABLE", "still not"))
        with self.assertRaises(errors.Unavailable) as caught:
            client(transport, self.clock, retries=1).statement("j1")
        self.assertEqual(caught.exception.detail, "still not")

    def test_no_answer_at_all_is_unreachable(self) -> None:
        transport = ScriptedTransport(*[ConnectionRefusedError("connection refused")] * 3)
        with self.assertRaisesRegex(errors.GatewayUnreachable, "cannot reach the gateway at http://gw.test: connection refused"):
            client(transport, self.clock).get_job("j1")
        self.assertEqual(len(transport.requests), 3)

    def test_an_answer_that_is_not_json_is_unexpected(self) -> None:
        from gpunet.transport import HttpResponse

        transport = ScriptedTransport(HttpResponse(200, {}, b"<html>"))
        with self.assertRaisesRegex(errors.UnexpectedResponse, "GET /v1/jobs/j1 is not JSON"):
            client(transport, self.clock).get_job("j1")

    def test_iter_jobs_pages_through(self) -> None:
        transport = ScriptedTransport(ok({"items": [{"jobId": "a"}], "nextCursor": "c1"}), ok({"items": [{"jobId": "b"}], "nextCursor": None}))
        self.assertEqual([j["jobId"] for j in client(transport, self.clock).iter_jobs(limit=1)], ["a", "b"])
        self.assertIn("cursor=c1", transport.requests[1].url)


class FollowTest(unittest.TestCase):
    def setUp(self) -> None:
        self.clock = FakeClock()

    def test_after_the_end_it_waits_for_settlement_resuming_after_the_last_event(self) -> None:
        transport = ScriptedTransport(
            FakeStream(200, [b": stream open\n\n", job_event(1, "job.submitted"), job_event(2, "job.funded"), job_event(3, "job.completed") + frame("end", {"status": "completed"})]),
            FakeStream(200, [frame("end", {"status": "completed"})]),
            FakeStream(200, [job_event(4, "job.settled"), frame("end", {"status": "completed"})]),
        )
        c = client(transport, self.clock)
        types = [e.type for e in c.follow("j1", poll_interval=0.25)]
        self.assertEqual(types, ["job.submitted", "job.funded", "job.completed", "job.settled"])
        self.assertEqual([r.headers.get("last-event-id") for r in transport.requests], [None, "3", "3"])
        self.assertEqual(self.clock.slept, [0.25, 0.25])
        self.assertTrue(all(s.closed for s in transport.streams))

    def test_a_job_never_funded_ends_at_its_end(self) -> None:
        transport = ScriptedTransport(FakeStream(200, [job_event(1, "job.submitted"), job_event(2, "escrow.rejected"), frame("end", {"status": "rejected"})]))
        self.assertEqual([e.seq for e in client(transport, self.clock).follow("j1")], [1, 2])
        self.assertEqual(len(transport.requests), 1)

    def test_settlement_may_be_left_out(self) -> None:
        transport = ScriptedTransport(FakeStream(200, [job_event(1, "job.funded"), job_event(2, "job.completed"), frame("end", {"status": "completed"})]))
        self.assertEqual(len(list(client(transport, self.clock).follow("j1", settlement=False))), 2)

    def test_no_settlement_in_time_is_a_follow_timeout(self) -> None:
        ends = [FakeStream(200, [frame("end", {"status": "failed"})]) for _ in range(4)]
        transport = ScriptedTransport(FakeStream(200, [job_event(1, "job.funded"), job_event(2, "job.failed"), frame("end", {"status": "failed"})]), *ends)
        with self.assertRaisesRegex(errors.FollowTimeout, "job j1 failed, but settlement did not settle it in 3.0 s"):
            list(client(transport, self.clock).follow("j1", settlement_timeout=3.0, poll_interval=1.0))
        self.assertEqual(self.clock.slept, [1.0, 1.0, 1.0])

    def test_a_dropped_stream_is_resumed_after_the_last_event_id(self) -> None:
        transport = ScriptedTransport(
            FakeStream(200, [job_event(1, "job.submitted"), TimeoutError("timed out")]),
            ConnectionRefusedError("refused"),
            FakeStream(200, [job_event(2, "escrow.rejected"), frame("end", {"status": "rejected"})]),
        )
        self.assertEqual([e.seq for e in client(transport, self.clock).follow("j1")], [1, 2])
        self.assertEqual([r.headers.get("last-event-id") for r in transport.requests], [None, "1", "1"])
        self.assertEqual(self.clock.slept, [0.5, 1.0])

    def test_a_stream_that_keeps_dropping_fails(self) -> None:
        transport = ScriptedTransport(*[FakeStream(200, [b": open\n\n"]) for _ in range(3)])
        with self.assertRaisesRegex(errors.StreamFailed, "dropped 3 times in a row \\(the gateway closed the stream\\)"):
            list(client(transport, self.clock, stream_retries=2).follow("j1"))

    def test_an_unknown_job_is_not_found_at_once(self) -> None:
        transport = ScriptedTransport(problem(404, "NOT_FOUND", "no job j9"))
        with self.assertRaises(errors.NotFound):
            list(client(transport, self.clock).follow("j9"))
        self.assertEqual(len(transport.requests), 1)

    def test_a_job_gone_mid_stream_is_not_found(self) -> None:
        transport = ScriptedTransport(FakeStream(200, [job_event(1, "job.submitted"), frame("end", {"status": None})]))
        with self.assertRaisesRegex(errors.NotFound, "job j1 no longer exists"):
            list(client(transport, self.clock).follow("j1"))

    def test_resumed_past_the_start_it_asks_the_job_whether_it_was_funded(self) -> None:
        transport = ScriptedTransport(
            FakeStream(200, [job_event(5, "job.completed"), frame("end", {"status": "completed"})]),
            ok({**JOB, "cost": {"escrow": "700000"}}),
            FakeStream(200, [job_event(6, "job.settled"), frame("end", {"status": "completed"})]),
        )
        self.assertEqual([e.seq for e in client(transport, self.clock).follow("j1", after=4)], [5, 6])
        self.assertEqual(transport.requests[0].headers["last-event-id"], "4")

    def test_progress_goes_to_the_stream_given(self) -> None:
        out = io.StringIO()
        transport = ScriptedTransport(FakeStream(200, [job_event(1, "job.queued"), frame("end", {"status": "unschedulable"})]))
        list(client(transport, self.clock).follow("j1", progress=out))
        self.assertEqual(out.getvalue(), "00:00:01 queued: waiting for capacity\n")


class LogsTest(unittest.TestCase):
    def test_chunks_without_follow_end_at_the_end(self) -> None:
        clock = FakeClock()
        chunk = {"jobId": "j1", "attempt": 1, "rank": 2, "stream": "stdout", "seq": 1, "lines": ["step 1"], "dropped": 0, "at": "t"}
        transport = ScriptedTransport(FakeStream(200, [frame("log", chunk, 11), frame("log", chunk, 11), frame("log", {**chunk, "seq": 2}, 12), frame("end", {"jobId": "j1"})]))
        chunks = list(client(transport, clock).logs("j1", rank=2))
        self.assertEqual([(c.id, c.rank, c.seq, c.lines) for c in chunks], [(11, 2, 1, ("step 1",)), (12, 2, 2, ("step 1",))])
        self.assertEqual(transport.requests[0].url, "http://gw.test/v1/jobs/j1/logs?follow=0&rank=2")
        with self.assertRaisesRegex(ValueError, "stream: must be 'stdout' or 'stderr'"):
            list(client(transport, clock).logs("j1", stream="both"))


if __name__ == "__main__":
    unittest.main()
