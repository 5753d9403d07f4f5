"""The arbiter's own version, read once from the installed package's metadata."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Final

__all__ = ["DISTRIBUTION", "VERSION"]

DISTRIBUTION: Final = "ecarte-arena"
"""The name the project is installed under (``[project] name`` in pyproject.toml)."""


def _installed_version() -> str:
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        # Run from a source tree that was never installed: no metadata to read.
        return "unknown"


VERSION: Final = _installed_version()
"""The version in pyproject.toml, or ``unknown`` when the package is not installed."""
