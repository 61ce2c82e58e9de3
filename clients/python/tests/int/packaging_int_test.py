"""pyproject.toml builds a wheel with Debian's setuptools, offline, holding the package and its models."""

import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile
from pathlib import Path

import gpunet

ROOT = Path(__file__).resolve().parents[2]


class PackagingTest(unittest.TestCase):
    def test_builds_a_wheel(self) -> None:
        with tempfile.TemporaryDirectory() as out, tempfile.TemporaryDirectory() as build:
            # setuptools builds in the source tree (build/, *.egg-info): build a copy of it.
            source = Path(build) / "python"
            shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
            done = subprocess.run(
                [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", out, str(source)],
                capture_output=True,
                text=True,
                cwd=build,
                timeout=120,
            )
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            [wheel] = Path(out).glob("gpunet-*.whl")
            self.assertEqual(wheel.name, f"gpunet-{gpunet.__version__}-py3-none-any.whl")
            names = set(zipfile.ZipFile(wheel).namelist())
            for name in ("gpunet/__init__.py", "gpunet/client.py", "gpunet/models.py", "gpunet/py.typed"):
                self.assertIn(name, names)
            self.assertFalse(any(n.startswith("tests/") for n in names), names)


if __name__ == "__main__":
    unittest.main()
