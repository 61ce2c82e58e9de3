"""The package's version: pyproject.toml reads it from here (one place)."""

__version__ = "0.1.0"
