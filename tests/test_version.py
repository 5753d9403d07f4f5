"""The arbiter's version comes from the package metadata, not from a copy in the code."""

from __future__ import annotations

import importlib.metadata
import tomllib
from pathlib import Path

import pytest

from arbiter import version

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def test_version_is_the_one_in_pyproject() -> None:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    assert version.DISTRIBUTION == project["name"]
    assert version.VERSION == project["version"]


def test_version_without_metadata_is_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(version, "version", missing)
    assert version._installed_version() == "unknown"
