"""The golden playthroughs still match (regenerate with ``python -m tests.golden --regenerate``)."""

from __future__ import annotations

import pytest

from tests.golden import GOLDEN_DIR, PLAYTHROUGHS, render


@pytest.mark.parametrize("name", sorted(PLAYTHROUGHS))
def test_playthrough_matches_golden_file(name: str) -> None:
    rules, seed = PLAYTHROUGHS[name]
    expected = (GOLDEN_DIR / f"{name}.txt").read_text()
    assert render(rules, seed) == expected, (
        f"playthrough {name} changed; if the change is intended, run "
        "`python -m tests.golden --regenerate` and review the diff"
    )
