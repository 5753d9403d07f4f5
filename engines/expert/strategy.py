"""The expert engine: plays the classic policy of :mod:`engines.expert_policy`.

The policy lives outside this package because the search engine and the ceiling
player use it too (as the opponent model and the rollout policy).
"""

from __future__ import annotations

import random

from arbiter.rules import format_action
from engines.expert_policy import decide_info
from engines.view_info import read_view
from protocol.view import Observation

__all__ = ["choose"]


def choose(view: Observation, rng: random.Random) -> str:
    """The expert's action for a view (deterministic; ``rng`` is unused)."""
    return format_action(decide_info(read_view(view)))
