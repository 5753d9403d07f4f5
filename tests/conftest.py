"""Shared fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture
def tmp_path(tmp_path: Path) -> Path:
    """pytest's private (0700) per-test directory, opened to other users (0755).

    Run as root, the arena runs sandboxed bots as ``nobody`` (``bot_user: auto``), which
    must read the bots a test writes here, as a user's bot directory is readable.
    """
    os.chmod(tmp_path, 0o755)
    return tmp_path
