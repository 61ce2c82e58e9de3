"""Submit, get, list, idempotency and cancel against the real gateway."""

import unittest
import uuid

from gpunet import models
from tests.support.conforms import assert_conforms
from tests.support.gateway import EXAMPLE_15, client


class JobsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.client = client()

    def test_submits_example_15_then_gets_and_lists_it(self) -> None:
        job = self.client.submit_file(EXAMPLE_15)
        assert_conforms(job, models.OPERATIONS["POST /v1/jobs"]["202"])
        self.assertEqual((job["name"], job["gpus"], job["subnetId"], job["status"]), ("first-multi-provider-ddp", 4, "demo", "submitted"))

        got = self.client.get_job(job["jobId"])
        assert_conforms(got, models.Job)
        self.assertEqual(got["jobId"], job["jobId"])

        page = self.client.list_jobs(status="submitted", limit=200)
        assert_conforms(page, models.JobList)
        self.assertIn(job["jobId"], [j["jobId"] for j in page["items"]])
        self.assertIn(job["jobId"], [j["jobId"] for j in self.client.iter_jobs(limit=1, subnet="demo")])

        spec = self.client.job_spec(job["jobId"])
        self.assertEqual(spec["metadata"]["name"], "first-multi-provider-ddp")

    def test_a_dict_spec_goes_as_json(self) -> None:
        spec = {
            "apiVersion": "gpunet.io/v1",
            "kind": "Ensemble",
            "metadata": {"name": "from-a-dict"},
            "max_duration": "10m",
            "subnet": "demo",
            "budget": {"asset": "NTX", "decimals": 6, "max_price_per_gpu_hour": "1.00"},
            "allocations": {
                "ddp": {
                    "executor": "process",
                    "execution": {"cmd": ["/usr/bin/python3", "-c", "print(1)"]},
                    "resources": {"cpu": {"cores": 1}, "ram": {"size": "1GiB"}, "gpus": {"count": 2}},
                    "distributed": {"framework": "torchrun", "gpus_per_rank": 1, "max_nodes": 2},
                }
            },
        }
        job = self.client.submit(spec)
        self.assertEqual((job["name"], job["gpus"]), ("from-a-dict", 2))
        self.assertEqual(self.client.job_spec(job["jobId"])["metadata"]["name"], "from-a-dict")

    def test_the_same_idempotency_key_gets_the_first_job(self) -> None:
        key = f"py-int-{uuid.uuid4()}"
        first = self.client.submit_file(EXAMPLE_15, idempotency_key=key)
        again = self.client.submit_file(EXAMPLE_15, idempotency_key=key)
        self.assertEqual(again["jobId"], first["jobId"])

    def test_cancels_a_job(self) -> None:
        job = self.client.submit_file(EXAMPLE_15)
        cancelled = self.client.cancel(job["jobId"], "wrong dataset")
        assert_conforms(cancelled, models.OPERATIONS["POST /v1/jobs/{jobId}/cancel"]["202"])
        self.assertIsNotNone(cancelled["cancelRequestedAt"])
        self.assertIsNotNone(self.client.get_job(job["jobId"])["cancelRequestedAt"])


if __name__ == "__main__":
    unittest.main()
