"""The gateway's problem+json answers as typed exceptions naming the field at fault."""

import unittest

from gpunet import Client, NotFound, Unauthorized, ValidationError
from tests.support.gateway import EXAMPLE_15, client, env

SPEC = EXAMPLE_15.read_text(encoding="utf-8")


class ErrorsTest(unittest.TestCase):
    def test_a_spec_without_a_budget_is_a_validation_error_naming_budget(self) -> None:
        no_budget = SPEC.replace("budget:\n  asset: NTX\n  decimals: 6\n  max_price_per_gpu_hour: '1.00'\n", "")
        self.assertNotIn("budget:", no_budget)
        with self.assertRaises(ValidationError) as caught:
            client().submit(no_budget)
        error = caught.exception
        self.assertEqual((error.status, error.code), (400, "INVALID_SPEC"))
        self.assertIn("budget", error.fields)
        self.assertRegex(str(error), r"^HTTP 400 INVALID_SPEC: .*\n  budget: ")

    def test_a_wrong_type_is_named_with_its_line_and_column(self) -> None:
        with self.assertRaises(ValidationError) as caught:
            client().submit(SPEC.replace("count: 4", "count: four"))
        [field] = [e for e in caught.exception.errors if e.path == "allocations.ddp.resources.gpus.count"]
        line = SPEC.splitlines().index("        count: 4") + 1
        self.assertEqual((field.line, field.column), (line, 16))
        self.assertIn(f"  allocations.ddp.resources.gpus.count (line {line}, column 16): ", str(caught.exception))

    def test_an_unknown_key_is_unauthorized(self) -> None:
        with self.assertRaises(Unauthorized) as caught:
            Client(env("GPUNET_TEST_GATEWAY"), "gpn_BBBBBBBBBBBB_" + "y" * 43).list_jobs()
        self.assertEqual((caught.exception.status, caught.exception.code), (401, "UNAUTHENTICATED"))

    def test_an_unknown_job_is_not_found(self) -> None:
        c = client()
        for call in (c.get_job, c.statement, c.cancel, lambda j: list(c.follow(j)), lambda j: list(c.logs(j))):
            with self.subTest(call=call):
                with self.assertRaises(NotFound) as caught:
                    call("no-such-job")
                self.assertEqual(caught.exception.code, "NOT_FOUND")

    def test_a_bad_query_names_the_parameter(self) -> None:
        with self.assertRaises(ValidationError) as caught:
            client().list_jobs(limit=0)
        self.assertTrue(any("limit" in f for f in caught.exception.fields), str(caught.exception))


if __name__ == "__main__":
    unittest.main()
