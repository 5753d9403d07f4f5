"""Golden playthroughs: deals written out state by state with both views and the legal actions.

The files under ``tests/golden/`` are checked by ``tests/test_golden.py``; a change to
the rules or the views shows up as a readable diff.  They are regenerated only by the
explicit command::

    python -m tests.golden --regenerate
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

import msgspec

from arbiter.cards import CARDS, format_cards
from arbiter.rules import Phase, Rules, deck_for, format_action, make_rules, new_game
from arbiter.view import observe

GOLDEN_DIR = Path(__file__).parent / "golden"

PLAYTHROUGHS: dict[str, tuple[Rules, int]] = {
    "default-seed-1": (make_rules(), 1),
    "default-seed-5": (make_rules(), 5),
    "cavendish-seed-2": (make_rules("cavendish"), 2),
    "opening-lead-2-3-seed-3": (make_rules(king_deadline="opening_lead", packets="2-3"), 3),
}

_encode = msgspec.json.Encoder(order="deterministic").encode


def render(rules: Rules, seed: int, max_deals: int = 3) -> str:
    """Play ``max_deals`` deals (or to the end of the game) with seeded random actions."""
    rng = random.Random(seed)
    st = new_game(rules, first_dealer=seed % 2)
    lines = [f"# rules: {_encode(rules).decode()}", f"# seed: {seed}", ""]
    step = 0
    while not st.is_over():
        if st.phase == Phase.DEAL:
            if st.deal_number >= max_deals:
                break
            deck = deck_for(seed, 0, st.deal_number)
            st.deal(deck)
            lines.append(f"== deal {st.deal_number}, dealer seat {st.dealer}")
            lines.append("deck: " + " ".join(str(CARDS[c]) for c in deck))
            lines.append(f"scores: {st.scores}")
            continue
        step += 1
        lines.append(f"-- step {step}: {st.phase.name}, seat {st.to_act} to act")
        lines.append(f"hands: 0={format_cards(st.hands[0])} 1={format_cards(st.hands[1])}")
        lines.append(f"stock left: {st.stock_left}")
        for seat in (0, 1):
            lines.append(f"view {seat}: {_encode(observe(st, seat)).decode()}")
        actions = st.legal_actions()
        lines.append("legal: " + " | ".join(format_action(a) for a in actions))
        action = rng.choice(actions)
        lines.append(f"seat {st.to_act} plays: {format_action(action)}")
        st.apply(action)
    lines.append(f"== end: phase {st.phase.name}, scores {st.scores}, winner {st.winner}")
    lines.append("view 0: " + _encode(observe(st, 0)).decode())
    lines.append("view 1: " + _encode(observe(st, 1)).decode())
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--regenerate", action="store_true", help="rewrite the golden files")
    args = parser.parse_args()
    if not args.regenerate:
        parser.error("pass --regenerate to rewrite the golden files")
    GOLDEN_DIR.mkdir(exist_ok=True)
    for name, (rules, seed) in PLAYTHROUGHS.items():
        (GOLDEN_DIR / f"{name}.txt").write_text(render(rules, seed))
        print(f"wrote {GOLDEN_DIR / name}.txt")


if __name__ == "__main__":
    main()
