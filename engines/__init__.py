"""The bundled engines: one package per engine, and the modules they share.

- :mod:`engines.view_info` reads a seat's view into bit sets;
- :mod:`engines.double_dummy` solves the rest of a deal with both hands known;
- :mod:`engines.utility` values a deal's outcome on the rules' own scoring;
- :mod:`engines.expert_policy` is the classic policy (the expert engine's play);
- :mod:`engines.inprocess` plays strategies against each other in process;
- :mod:`engines.ceiling` is an all-seeing in-process player, for reference only.

Engines import only the rules core (:mod:`arbiter.cards`, :mod:`arbiter.rules`,
:mod:`arbiter.view`), :mod:`protocol` and each other's shared modules, never another
engine's package (``tests/test_layout.py`` checks it).
"""

from __future__ import annotations

import os
import random

__all__ = ["seeded_rng"]


def seeded_rng(name: str) -> random.Random:
    """A bot's random source: seeded from ``ECARTE_SEED`` when set (reproducible runs)."""
    seed = os.environ.get("ECARTE_SEED")
    return random.Random(f"{name}/{seed}") if seed is not None else random.Random()
