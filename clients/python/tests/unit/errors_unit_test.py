import json
import unittest

from gpunet import errors
from gpunet.errors import FieldError, error_from_problem


def problem(status: int, code: str, detail: str, **extra: object) -> bytes:
    body = {"type": f"https://gpunet.io/problems/{code.lower()}", "title": "t", "status": status, "detail": detail}
    body.update({"instance": "/v1/jobs", "code": code, **extra})
    return json.dumps(body).encode()


class ProblemMappingTest(unittest.TestCase):
    def test_each_status_maps_to_its_class(self) -> None:
        table = [
            (400, "INVALID_SPEC", errors.ValidationError),
            (400, "INVALID_REQUEST", errors.ValidationError),
            (401, "UNAUTHENTICATED", errors.Unauthorized),
            (403, "FORBIDDEN", errors.Forbidden),
            (404, "NOT_FOUND", errors.NotFound),
            (409, "CONFLICT", errors.Conflict),
            (413, "PAYLOAD_TOO_LARGE", errors.PayloadTooLarge),
            (415, "UNSUPPORTED_MEDIA_TYPE", errors.UnsupportedMediaType),
            (422, "IDEMPOTENCY_KEY_REUSED", errors.IdempotencyKeyReused),
            (429, "RATE_LIMITED", errors.RateLimited),
            (503, "UPSTREAM_UNAVAILABLE", errors.Unavailable),
            (500, "INTERNAL", errors.ServerError),
            (418, "TEAPOT", errors.ProblemError),
        ]
        for status, code, cls in table:
            with self.subTest(status=status, code=code):
                error = error_from_problem(status, problem(status, code, "why"))
                self.assertIs(type(error), cls)
                self.assertIsInstance(error, errors.GpunetError)
                self.assertEqual((error.status, error.code, error.detail), (status, code, "why"))

    def test_field_errors_are_named_with_their_place_and_reason(self) -> None:
        body = problem(
            400,
            "INVALID_SPEC",
            "the spec has 2 errors",
            errors=[
                {"path": "budget.max_price_per_gpu_hour", "message": "expected a string", "code": "invalid_type", "line": 9, "column": 27},
                {"path": "budget", "message": "a job needs a budget"},
            ],
        )
        error = error_from_problem(400, body)
        self.assertEqual(error.fields, ("budget.max_price_per_gpu_hour", "budget"))
        self.assertEqual(
            error.errors[0],
            FieldError("budget.max_price_per_gpu_hour", "expected a string", "invalid_type", 9, 27),
        )
        self.assertEqual(
            str(error),
            "HTTP 400 INVALID_SPEC: the spec has 2 errors\n"
            "  budget.max_price_per_gpu_hour (line 9, column 27): expected a string [invalid_type]\n"
            "  budget: a job needs a budget",
        )

    def test_a_body_that_is_no_problem_still_maps_by_status(self) -> None:
        error = error_from_problem(502, b"<html>Bad Gateway</html>")
        self.assertIsInstance(error, errors.ServerError)
        self.assertEqual(error.code, "HTTP_502")
        self.assertEqual(error.detail, "<html>Bad Gateway</html>")
        empty = error_from_problem(404, b"")
        self.assertIsInstance(empty, errors.NotFound)
        self.assertIn("HTTP 404 without a problem document", str(empty))

    def test_rate_limited_carries_retry_after(self) -> None:
        error = error_from_problem(429, problem(429, "RATE_LIMITED", "slow down"), "3")
        assert isinstance(error, errors.RateLimited)
        self.assertEqual(error.retry_after, 3.0)
        self.assertIsNone(error_from_problem(429, b"", "soon").retry_after)  # type: ignore[attr-defined]

    def test_malformed_field_errors_are_left_out(self) -> None:
        error = error_from_problem(400, problem(400, "INVALID_REQUEST", "bad", errors=["x", {"path": "q", "message": "m", "line": "3"}]))
        self.assertEqual(error.errors, (FieldError("q", "m"),))


if __name__ == "__main__":
    unittest.main()
