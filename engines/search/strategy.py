"""The search engine: determinisation and double-dummy play within a time budget.

Each decision samples *determinisations*: complete guesses of the cards this seat
cannot see (the opponent's hand, his discards, the order of the stock), drawn from
the unseen cards (all 32 minus our hand, our discards, the turn-up and the cards
played) so that they agree with everything observed:

- hard facts are never violated: the opponent holds ``5 - cards played`` cards, and a
  card his play has proved he cannot hold (he did not follow, did not beat the card
  led, or did not trump) is never given to him;
- soft evidence weights the sample by rejection: each sample is kept with the
  probability that the opponent, playing like the expert engine, would have done what
  he did with that hand ("policy inference", soft: the opponent is not the expert).
  A player who stood or refused is expected to hold a hand the expert would have
  stood or refused with; a dealer who accepted (and has not exchanged yet), one the
  expert would have accepted with; one who proposed (and was refused), one that the
  expert would have proposed with; one who took ``n`` cards kept ``5 - n`` good cards (trumps, kings
  and their queens), so his hand holds at least that many; a king of trumps he marked
  is in his hand for sure, one he let pass unmarked probably is not; and every card he
  played is checked against the card the expert would have played from that hand.  A
  sample that contradicts the model is kept with a small probability, not never.

How small is learnt from the opponent's own play.  Two models of him are kept, a loose
one (he errs from the expert's choices now and then) and a sharp one (he plays like the
expert, so his choices tell nearly all), each giving the probability of what he did
from a given hand.  The mean of each over the uniform samples drawn in a decision is the
likelihood of his observed play under that model; Bayes' rule turns it into a belief
that he plays like the expert, which weights the mixture the samples are kept by, and
the belief at the end of a deal (when most of his cards have been seen) is carried to
the next, kept within :data:`BELIEF_BOUNDS` so it can always move.  Against the expert
itself the sharp model measured no better than the loose one (the exchange signals say
little that a hand count does not), so this costs nothing there and protects the
inference against opponents who do not play by the book.

Values.  A finished deal is valued as the chance of winning the *game* from the new
scores (:func:`win_probability`: a table computed once from how deals end between two
expert players, the dealer alternating), so the target, vulnerability, the vole and
the king's point all count for what they are worth at this score.

Card play.  For each sample the rest of the deal is solved exactly
(:func:`engines.double_dummy.dd_card_tricks`, a memoised minimax on bit sets): every legal
card gets the final trick count it leads to against a perfect opponent, turned into
the deal's value for us.  The card with the best average wins.

Exchange decisions (stand/propose, accept/refuse, the discard).  Each candidate is
played out on the same samples (common random numbers): the exchange phase is
finished with the expert policy for both seats on a real :class:`arbiter.rules.State`
holding the sampled cards and stock, the king of trumps is marked by its holder, and
the play is solved double-dummy up to what the score can tell apart
(:func:`engines.double_dummy.dd_class`: no trick, one or two, three or four, the vole).  The
best mean wins; ``exchange_margin`` can demand it beat the expert's choice by that
many standard errors of the paired difference (0 by default: the margin measured no
better).  A discard considers every legal one except those throwing a trump while
keeping a side card (up to 31), pruned by successive halving on the shared samples
(the worse half dropped after :data:`PRUNE_EVERY` samples, again after twice as many,
down to :data:`KEEP_AFTER_PRUNE`).  The mark is the expert's.

Why this design.  Perfect-information sampling is sound here for the reasons Long,
Sturtevant, Buro and Furtak (2010) give for when it works: the game is short, the
information hidden at the exchange (the stock) is revealed to neither player before
the choice matters, and disambiguation is fast (a deal's cards are all played).  The
strategy-fusion error is confined to the double-dummy card play after the exchange,
which measured small: seeing the opponent's hand in the card play adds only 0.4 points
of game-winning chance a deal to this engine's own, seeing it at the exchanges 2.6
(``bench/bench_deals.py search-sees-play search-sees-exchange``).  Precomputed
stand/propose tables (the Skat and bridge approach) were not built: sample-bounded
runs at several times the samples the budget allows measured no better than the
budget, so the engine's limit is not its sampling but the information it has at the
exchanges, most of all before the opponent has shown anything.  A best reply to the
expert's card play in place of perfect play (the opponent model pushed into the
valuation) measured no better either.

Levels.  :data:`LEVELS` grades the engine for a ladder of opponents: fewer samples
and, below level 5, a random choice among the actions searched that favours the
better ones (``temperature``), so the weak levels make mistakes a player would, cheap
ones often and costly ones seldom.  Levels 1 to 4 are bounded by sample counts, not
time, so they play alike on any machine that reaches those counts within the budget.

Time.  The budget is a parameter (default :data:`DEFAULT_BUDGET_MS`); a request's
``time_ms`` lowers it, and under a game clock so does a share of the time left
(:data:`CLOCK_SHARE`: the clock shrinks geometrically and never runs out).  The engine
works to a deadline of 75 % of the budget minus a fixed margin, checks the clock after
every sample (and every rollout), and always has the expert's answer in hand if time
runs out before the first sample.  ``max_samples`` and ``exchange_samples`` bound the
work by count; with a clock that never advances the engine is deterministic (tests use
that).
"""

from __future__ import annotations

import functools
import math
import random
import time
from collections.abc import Callable
from typing import Any, Final, NamedTuple

from arbiter.cards import FULL_PACK, JACK, KING, QUEEN, SUIT_MASKS, card_list
from arbiter.rules import (
    ACCEPT,
    DISCARD,
    HIGHER_IN_SUIT,
    PROPOSE,
    REFUSE,
    STAND,
    Phase,
    Rules,
    State,
    capped_points,
    deal_points,
    format_action,
    new_game,
    reaches_target,
)
from engines.double_dummy import dd_card_tricks, dd_class, dd_lead
from engines.expert_policy import card_choice, choose_state, decide_info, refuses, stands
from engines.utility import game_utility, trick_utilities
from engines.view_info import ViewInfo, read_view
from protocol.view import Observation

__all__ = [
    "CLOCK_SHARE",
    "DEFAULT_BUDGET_MS",
    "LEVELS",
    "Level",
    "SearchEngine",
    "SearchStats",
    "choose",
    "rollout_value",
    "win_probability",
]

DEFAULT_BUDGET_MS: Final = 80.0
"""Time budget per decision when the request does not say (milliseconds)."""

CLOCK_SHARE: Final = 25
"""Under a game clock, a decision spends at most this fraction (1/CLOCK_SHARE) of the
time left: a seat makes about 30-45 decisions in a game of five points."""
PRUNE_EVERY: Final = 12
"""Samples after which the exchange search first drops its worse half of candidates
(then again after twice as many, and so on)."""
KEEP_AFTER_PRUNE: Final = 3
"""Candidates the exchange search keeps to the end, the expert's among them."""
WIDE_MIN_MS: Final = 25.0
"""Working time below which a discard is chosen among the expert's and the "keep the
best k" ones only: every legal discard needs about that to be sampled at all."""
FEW_SAMPLES: Final = 40
"""Below this many samples an exchange action must beat the expert's by one standard
error of the paired difference, whatever ``exchange_margin`` says."""
MARGIN_MS: Final = 3.0
"""Time kept back from the working deadline for reading the view and answering."""
MAX_SAMPLES: Final = 600
"""Most determinisations per card-play decision, however much time is left (the play
is as good as an all-seeing player's well before that)."""
EXCHANGE_SAMPLES: Final = 2000
"""Most determinisations per exchange decision, however much time is left."""


class Level(NamedTuple):
    """A strength level: how much the engine searches and how surely it picks the best."""

    max_samples: int
    """Most determinisations per card-play decision."""
    exchange_samples: int
    """Most determinisations per exchange decision."""
    temperature: float
    """Chance-of-winning scale of its mistakes (0: always the best mean)."""


LEVELS: Final = {
    1: Level(16, 16, 0.2),
    2: Level(16, 16, 0.06),
    3: Level(32, 32, 0.02),
    4: Level(60, 60, 0.005),
    5: Level(MAX_SAMPLES, EXCHANGE_SAMPLES, 0.0),
}
"""Strength levels.  Every level works within the same time budget; levels 1 to 4 are
bounded by sample counts (so they play alike on any machine fast enough to reach
them), and levels 1 to 4 choose at random among the actions searched, weighted by
``exp(-loss / temperature)`` where the loss is how much less likely the action is to
win the game than the best one: cheap mistakes are common, costly ones rare.  Level 5
is the full engine (the default)."""
UNLIKELY: Final = 0.2
"""Acceptance of a sample whose hand contradicts the opponent's observed choice."""
SHARP_CHOICE: Final = 0.03
"""The same, for an opponent believed to play like the expert (his choices then tell
nearly all)."""
SHARP_PLAY: Final = 0.05
"""Acceptance of a sample where such an opponent would have played another card (or
marked the king he let pass)."""
BELIEF_START: Final = 0.5
"""Belief, before any deal is seen, that the opponent plays like the expert."""
BELIEF_BOUNDS: Final = (0.05, 0.95)
"""The belief carried from deal to deal stays within these, so it can always move."""

_PHASES: Final = {p.name.lower(): p for p in Phase}

# How deals end between two expert players (24,000 simulated deals, default rules):
# (king points to the non-dealer, king points to the dealer, trick points to the
# non-dealer, trick points to the dealer, how many deals ended so).
_DEAL_OUTCOMES: Final = (
    (0, 0, 0, 1, 3908),
    (0, 0, 0, 2, 713),
    (0, 0, 1, 0, 4779),
    (0, 0, 2, 0, 809),
    (0, 1, 0, 1, 4208),
    (0, 1, 0, 2, 1111),
    (0, 1, 1, 0, 2633),
    (0, 1, 2, 0, 285),
    (1, 0, 0, 1, 1094),
    (1, 0, 0, 2, 67),
    (1, 0, 1, 0, 3235),
    (1, 0, 2, 0, 1094),
)


@functools.cache
def _win_table(target: int) -> dict[tuple[int, int, int], float]:
    """P(win the game) for scores below ``target``: key (mine, his, 1 if I deal next)."""
    total = float(sum(o[4] for o in _DEAL_OUTCOMES))
    table: dict[tuple[int, int, int], float] = {}
    # Every deal scores at least one trick point: fill by decreasing score sum.
    for s in range(2 * target - 2, -1, -1):
        for a in range(max(0, s - target + 1), min(s, target - 1) + 1):
            b = s - a
            for d in (0, 1):
                v = 0.0
                for knd, kd, tnd, td, count in _DEAL_OUTCOMES:
                    ka, kb, ta, tb = (kd, knd, td, tnd) if d else (knd, kd, tnd, td)
                    if a + ka >= target:
                        x = 1.0
                    elif b + kb >= target:
                        x = 0.0
                    elif a + ka + ta >= target:
                        x = 1.0
                    elif b + kb + tb >= target:
                        x = 0.0
                    else:
                        x = table[(a + ka + ta, b + kb + tb, 1 - d)]
                    v += count * x
                table[(a, b, d)] = v / total
    return table


def win_probability(mine: int, his: int, i_deal: bool, target: int) -> float:
    """Chance of winning the game from these scores, ``i_deal`` saying who deals next."""
    if mine >= target:
        return 1.0
    if his >= target:
        return 0.0
    return _win_table(target)[(mine, his, int(i_deal))]


def _outcome_value(
    me: int,
    dealer: int,
    scores: list[int],
    deal_so_far: list[int],
    rules: Rules,
    king: tuple[int, int],
    tricks: tuple[int, int],
) -> float:
    """P(win the game) for ``me`` after the deal adds ``king`` then ``tricks`` points."""
    opp = 1 - me
    # Scored as the state machine does: the king's point first, then the tricks.
    km = capped_points(king[0], deal_so_far[me], rules)
    ko = capped_points(king[1], deal_so_far[opp], rules)
    tm = capped_points(tricks[0], deal_so_far[me] + km, rules)
    to = capped_points(tricks[1], deal_so_far[opp] + ko, rules)
    if reaches_target(scores[me] + km, rules):
        return 1.0
    if reaches_target(scores[opp] + ko, rules):
        return 0.0
    return win_probability(scores[me] + km + tm, scores[opp] + ko + to, me != dealer, rules.target)


def _trick_values(info: ViewInfo, win: bool) -> list[float]:
    """Value for this seat of ending the deal with 0..5 tricks."""
    me = info.seat
    if not win:
        return trick_utilities(me, info.scores, info.vulnerable, info.deal_points, info.rules)
    return [
        _outcome_value(
            me,
            info.dealer,
            info.scores,
            info.deal_points,
            info.rules,
            (0, 0),
            deal_points(t, info.vulnerable, me, info.rules),
        )
        for t in range(6)
    ]


class SearchStats:
    """What the last decision did (for benchmarks and tests)."""

    __slots__ = ("candidates", "elapsed_ms", "samples", "tries")

    def __init__(self) -> None:
        self.samples = 0
        """Determinisations kept."""
        self.tries = 0
        """Determinisations drawn (kept or rejected)."""
        self.candidates = 0
        """Actions compared."""
        self.elapsed_ms = 0.0
        """Wall time of the decision."""


def _keepers(hand: int, trump: int) -> int:
    """Cards the expert keeps in an exchange: trumps, kings, a queen with her king..."""
    keep = hand & SUIT_MASKS[trump]
    for s in range(4):
        if s == trump:
            continue
        b = hand >> (8 * s) & 255
        if b >> KING & 1:
            keep |= 1 << (8 * s + KING)
            if b >> QUEEN & 1:
                keep |= 1 << (8 * s + QUEEN)
                if b >> JACK & 1:
                    keep |= 1 << (8 * s + JACK)
    return keep


class _Model:
    """The opponent model: how likely a full opponent hand is, given his choices."""

    def __init__(
        self,
        info: ViewInfo,
        play_eps: float,
        mark_eps: float,
        choice_eps: float = UNLIKELY,
        belief: float = 0.0,
    ) -> None:
        self.info = info
        self.choice_eps = choice_eps
        self.belief = belief
        """Prior belief that the opponent plays like the expert (from earlier deals)."""
        self._top: tuple[float, float] | None = None
        self.exchanged = bool(info.taken[info.opp])
        """Whether he has discarded (cards we cannot see him hold for played)."""
        self.hidden = info.unseen
        """Cards we cannot see: where his discards are."""
        self.evidence = [0.0, 0.0]
        """Summed weights of the samples drawn, under the sharp and the loose model."""
        opp = info.opp
        self.trump = info.trump
        # Scores when the exchange decisions were taken (before this deal's marks).
        self.my_score = info.scores[info.seat] - info.deal_points[info.seat]
        self.opp_score = info.scores[opp] - info.deal_points[opp]
        if info.turnup & 7 == KING:
            if info.dealer == info.seat:
                self.my_score += info.king_scores[info.seat]
            else:
                self.opp_score += info.king_scores[opp]
        event = info.last_ex_event[opp]
        mine = info.last_ex_event[info.seat]
        self.kind = ""
        if event == "stand":
            self.kind = "stood"
        elif event == "refuse":
            self.kind = "refused"
        elif event == "propose" and (mine == "refuse" or info.phase == "answer"):
            self.kind = "proposed"
        taken = info.taken[opp]
        if event == "accept" and (len(taken) < info.proposals or taken[-1] == 0):
            # He accepted our proposal and has not exchanged since (or took no card):
            # he holds the hand he accepted with.
            self.kind = "accepted"
        # Cards kept at his last exchange (with the hand he holds, if he accepted since).
        self.kept = 5 - taken[-1] if taken and self.kind in ("", "proposed", "accepted") else 0
        if self.kind == "proposed" and info.phase != "answer":
            # He proposed, was refused: his final hand is the one he proposed with.
            self.kept = 0
        king = 1 << (info.trump * 8 + KING)
        self.king = king
        self.forced = 0
        """Cards he must hold now (the king of trumps he marked)."""
        if info.marked == opp and not info.played[opp] & king:
            self.forced = king
        # He let his deadline to mark the king pass: the expert would have marked it.
        deadline_passed = (
            info.played[opp] != 0
            if info.rules.king_deadline == "own_first_card"
            else bool(info.plays)
        )
        self.mark_eps = (
            mark_eps if deadline_passed and info.marked != opp and info.turnup & 7 != KING else 1.0
        )
        self.play_eps = play_eps
        self.plays: list[tuple[int, int, int, int]] = []
        """His cards played: (card led by me or -1, his card, cards played before, his before)."""
        if play_eps < 1.0:
            before = 0
            his_before = 0
            lead = -1
            for seat, card in info.plays:
                if seat == opp:
                    self.plays.append((lead, card, before, his_before))
                    his_before |= 1 << card
                lead = card if lead < 0 else -1
                before |= 1 << card

    def _misfits(self, hand: int) -> tuple[int, int, int, int, int]:
        """How ``hand`` disagrees with the expert model: (his stand or refusal, a proposal
        on a hand the expert stands on, keepers short of the cards he kept, the king left
        unmarked, card plays)."""
        info = self.info
        t = self.trump
        choice = proposed = short = 0
        if self.kind == "stood":
            if not stands(hand, t, self.opp_score, self.my_score, info.target, info.exchanges):
                choice = 1
        elif self.kind in ("refused", "accepted"):
            first = info.proposals == 1 or info.rules.refusal_penalty == "any"
            refused = refuses(hand, t, self.opp_score, self.my_score, info.target, first)
            if refused != (self.kind == "refused"):
                choice = 1
        elif self.kind == "proposed":
            if stands(hand, t, self.opp_score, self.my_score, info.target, info.exchanges):
                proposed = 1
        if self.kept:
            short = max(0, self.kept - _keepers(hand, t).bit_count())
        mark = int(self.mark_eps < 1.0 and bool(hand & self.king))
        plays = 0
        if self.plays:
            must = info.rules.must_trump
            up = ~(1 << info.turnup)
            for lead, card, before, his_before in self.plays:
                now = hand & ~his_before
                unseen = FULL_PACK & ~now & up & ~before
                if card_choice(now, lead, t, must, unseen) != card:
                    # He may hold the card for master because the higher ones are
                    # among his discards, which we cannot see.
                    if (
                        not self.exchanged
                        or card_choice(
                            now, lead, t, must, unseen & ~(HIGHER_IN_SUIT[card] & self.hidden)
                        )
                        != card
                    ):
                        plays += 1
        return choice, proposed, short, mark, plays

    def _likelihood(self, misfits: tuple[int, int, int, int, int], c: float, p: float) -> float:
        """P(what he did | his hand) under a model that errs with ``c`` in his exchange
        choices and ``p`` in his card play and marking (each check a yes or no)."""
        choice, proposed, short, mark, plays = misfits
        q = min(0.5, 1.75 * c)
        v = 1.0
        if self.kind in ("stood", "refused", "accepted"):
            v *= c if choice else 1.0 - c
        elif self.kind == "proposed":
            v *= q if proposed else 1.0 - q
        if self.kept:
            v *= c**short if short else 1.0 - c
        if self.mark_eps < 1.0:
            v *= p if mark else 1.0 - p
        n = len(self.plays)
        return v * p**plays * (1.0 - p) ** (n - plays)

    def weight(self, hand: int) -> float:
        """Probability of keeping a sample where the opponent's whole deal hand is ``hand``.

        A mixture of a loose and a sharp expert model, weighted by the belief that the
        opponent plays like the expert; every call also adds to the evidence for that
        belief (the mean likelihood of uniform samples under each model is the
        likelihood of what he did under it).
        """
        if self._top is None:
            none = (0, 0, 0, 0, 0)
            self._top = (
                self._likelihood(none, SHARP_CHOICE, SHARP_PLAY),
                self._likelihood(none, self.choice_eps, self.play_eps),
            )
        misfits = self._misfits(hand)
        if misfits == (0, 0, 0, 0, 0):
            sharp, loose = self._top
        else:
            sharp = self._likelihood(misfits, SHARP_CHOICE, SHARP_PLAY)
            loose = self._likelihood(misfits, self.choice_eps, self.play_eps)
        self.evidence[0] += sharp
        self.evidence[1] += loose
        b = self.posterior()
        top = b * self._top[0] + (1.0 - b) * self._top[1]
        return (b * sharp + (1.0 - b) * loose) / top

    def posterior(self) -> float:
        """Belief that the opponent plays like the expert, given this deal so far."""
        sharp, loose = self.evidence
        if loose <= 0.0:
            return self.belief
        b = self.belief
        return b * sharp / (b * sharp + (1.0 - b) * loose)


def _king_bonus(state: State) -> list[int]:
    """The point each seat will score for marking a king of trumps it still holds."""
    bonus = [0, 0]
    if not state.king_done:
        king = 1 << (state.trump * 8 + KING)
        for seat in (0, 1):
            if state.hands[seat] & king:
                bonus[seat] = 1
    return bonus


def _utility_after_exchanges(state: State, me: int) -> float:
    """Value for ``me`` of a state whose exchanges are over: marks, then double dummy."""
    bonus = _king_bonus(state)
    nd = 1 - state.dealer
    lead_tricks = dd_lead(
        state.hands[nd], state.hands[state.dealer], state.trump, state.rules.must_trump
    )
    mine = lead_tricks if me == nd else 5 - lead_tricks
    pm, po = deal_points(mine, state.vulnerable, me, state.rules)
    return game_utility(
        me, (pm + bonus[me], po + bonus[1 - me]), state.scores, state.deal_points, state.rules
    )


def rollout_value(state: State, me: int, first: int) -> float:
    """Apply ``first``, finish the exchanges with the expert for both, solve the play."""
    state.apply(first)
    phase = state.phase
    while phase in (Phase.PROPOSE, Phase.ANSWER, Phase.DISCARD):
        state.apply(choose_state(state, state.to_act))
        phase = state.phase
    return _utility_after_exchanges(state, me)


def _search_value(state: State, me: int, win: bool) -> float:
    """Like :func:`_utility_after_exchanges`, valued as the chance of winning the game."""
    bonus = _king_bonus(state)
    nd = 1 - state.dealer
    lead_tricks = dd_class(
        state.hands[nd], state.hands[state.dealer], state.trump, state.rules.must_trump
    )
    mine = lead_tricks if me == nd else 5 - lead_tricks
    points = deal_points(mine, state.vulnerable, me, state.rules)
    if not win:
        gained = (points[0] + bonus[me], points[1] + bonus[1 - me])
        return game_utility(me, gained, state.scores, state.deal_points, state.rules)
    return _outcome_value(
        me,
        state.dealer,
        state.scores,
        state.deal_points,
        state.rules,
        (bonus[me], bonus[1 - me]),
        points,
    )


def _rollout(state: State, me: int, first: int, win: bool) -> float:
    """Apply ``first``, finish the exchanges with the expert for both, value the deal."""
    state.apply(first)
    phase = state.phase
    while phase in (Phase.PROPOSE, Phase.ANSWER, Phase.DISCARD):
        state.apply(choose_state(state, state.to_act))
        phase = state.phase
    return _search_value(state, me, win)


class SearchEngine:
    """A determinising double-dummy searcher with a per-decision time budget.

    Work stops at the deadline (read from ``clock``) or after ``max_samples``
    determinisations, whichever comes first: with a clock that never advances the
    engine is deterministic for a seeded ``rng``.
    """

    def __init__(
        self,
        budget_ms: float = DEFAULT_BUDGET_MS,
        search_exchanges: bool = True,
        clock: Callable[[], float] = time.perf_counter,
        max_samples: int = MAX_SAMPLES,
        *,
        win_value: bool = True,
        play_eps: float = 0.3,
        mark_eps: float = 0.2,
        exchange_margin: float = 0.0,
        exchange_samples: int | None = None,
        wide_discards: bool = True,
        choice_eps: float = UNLIKELY,
        adaptive: bool = True,
        temperature: float = 0.0,
    ) -> None:
        self.clock = clock
        """Seconds, monotonic (tests pass a fake)."""
        self.budget_ms = budget_ms
        """Milliseconds allowed per decision (a request's ``time_ms`` can lower it)."""
        self.search_exchanges = search_exchanges
        """Whether exchange decisions are searched (else the expert's are taken)."""
        self.max_samples = max_samples
        """Most determinisations kept per card-play decision."""
        self.exchange_samples = EXCHANGE_SAMPLES if exchange_samples is None else exchange_samples
        """Most determinisations per exchange decision (each costs one rollout per action)."""
        self.win_value = win_value
        """Value outcomes as the chance of winning the game (else as deal points)."""
        self.play_eps = play_eps
        """Weight of a sample where the expert would have played another card than he did."""
        self.mark_eps = mark_eps
        """Weight of a sample giving him the king of trumps he did not mark."""
        self.exchange_margin = exchange_margin
        """Standard errors by which an exchange action must beat the expert's."""
        self.choice_eps = choice_eps
        """Weight of a sample whose hand contradicts the opponent's exchange choices."""
        self.adaptive = adaptive
        """Whether the belief that the opponent plays like the expert is learnt from his
        play (else the loose model is used throughout)."""
        self.temperature = temperature
        """Above 0, choose among the searched actions at random, each with weight
        ``exp((mean - best mean) / temperature)``: the weaker levels' mistakes, likelier
        the cheaper they are.  The means are chances of winning the game (with
        ``win_value=False``, deal points, so the same temperature errs far less)."""
        self.belief = BELIEF_START if adaptive else 0.0
        """Belief, from the deals seen so far, that the opponent plays like the expert."""
        self._deal = -1
        self._deal_belief: float | None = None
        self._last_model: _Model | None = None
        self.wide_discards = wide_discards
        """Whether every sensible legal discard is searched (else the expert's and the
        "keep the best k" ones)."""
        self.stats = SearchStats()
        """What the last decision did."""

    @classmethod
    def at_level(cls, level: int, **kwargs: Any) -> SearchEngine:
        """The engine at strength ``level`` (a key of :data:`LEVELS`); a setting of the
        level given in ``kwargs`` (e.g. ``max_samples``) overrides the level's."""
        engine = cls(**kwargs)
        engine.set_level(level)
        for name in Level._fields:
            if kwargs.get(name) is not None:
                setattr(engine, name, kwargs[name])
        return engine

    def set_level(self, level: int) -> None:
        """Switch to strength ``level`` (a key of :data:`LEVELS`)."""
        if level not in LEVELS:
            raise ValueError(f"search level must be one of 1..{len(LEVELS)}, not {level!r}")
        self.max_samples, self.exchange_samples, self.temperature = LEVELS[level]

    def choose(
        self,
        view: Observation,
        rng: random.Random,
        time_ms: float | None = None,
        clock_ms: float | None = None,
    ) -> str:
        """The action for ``view``; a request's ``time_ms`` and ``clock_ms`` lower the budget."""
        start = self.clock()
        budget = self.budget_ms if time_ms is None else min(self.budget_ms, time_ms)
        if clock_ms is not None:
            budget = min(budget, clock_ms / CLOCK_SHARE)
        deadline = start + (0.75 * budget - MARGIN_MS) / 1000.0
        self.stats = SearchStats()
        info = read_view(view)
        self._new_deal(view.deal)
        self._last_model = None
        action = self.decide(info, rng, deadline)
        model = self._last_model
        if self.adaptive and model is not None and model.evidence[1] > 0.0:
            self._deal_belief = model.posterior()
        self.stats.elapsed_ms = (self.clock() - start) * 1000.0
        return format_action(action)

    def decide(self, info: ViewInfo, rng: random.Random, deadline: float) -> int:
        """The action for a digested view, working until ``deadline`` (on ``clock``)."""
        fallback = decide_info(info)
        if len(info.legal) == 1:
            return info.legal[0]
        if info.phase == "trick":
            return self._play(info, rng, deadline, fallback)
        if self.search_exchanges and info.phase in ("propose", "answer", "discard"):
            return self._exchange(info, rng, deadline, fallback)
        return fallback

    def _model(self, info: ViewInfo) -> _Model:
        model = _Model(info, self.play_eps, self.mark_eps, self.choice_eps, self.belief)
        self._last_model = model
        return model

    def _new_deal(self, deal: int) -> None:
        """At a new deal, carry the last deal's belief over as the prior."""
        if deal != self._deal:
            lo, hi = BELIEF_BOUNDS
            if self._deal_belief is not None:
                self.belief = min(hi, max(lo, self._deal_belief))
                self._deal_belief = None
            self._deal = deal

    # -- card play -------------------------------------------------------------------

    def _play(self, info: ViewInfo, rng: random.Random, deadline: float, fallback: int) -> int:
        me = info.seat
        util = _trick_values(info, self.win_value)
        model = self._model(info)
        forced = model.forced
        k = info.opp_hand_size - forced.bit_count()
        pool = list(card_list(info.unseen & ~info.opp_excluded & ~forced))
        if len(pool) < k:  # the exclusions contradict each other: trust only the unseen
            pool = list(card_list(info.unseen & ~forced))
        totals = dict.fromkeys(info.legal, 0.0)
        base = info.tricks[me]
        trump, must = info.trump, info.rules.must_trump
        played = info.played[info.opp]
        stats = self.stats
        limit = self.max_samples
        clock = self.clock
        n = 0
        tries = 0
        while n < limit and tries < 20 * limit:
            if clock() >= deadline:
                break
            tries += 1
            opp = forced
            for c in rng.sample(pool, k):
                opp |= 1 << c
            w = model.weight(opp | played)
            if w < 1.0 and rng.random() >= w:
                continue
            values = dd_card_tricks(info.hand, opp, info.lead, trump, must)
            for c, t in values.items():
                totals[c] += util[base + t]
            n += 1
        stats.tries = tries
        stats.samples = n
        stats.candidates = len(totals)
        if n == 0:
            return fallback
        if self.temperature > 0.0:
            return self._soften(list(totals), [v / n for v in totals.values()], rng)
        best = max(totals.values())
        eps = 1e-9 * max(1.0, abs(best))
        # Among equal averages prefer the expert's card, then the cheapest.
        if totals.get(fallback, -math.inf) >= best - eps:
            return fallback
        return min((c for c, v in totals.items() if v >= best - eps), key=lambda c: c & 7)

    # -- exchanges -------------------------------------------------------------------

    def _candidates(self, info: ViewInfo, fallback: int, wide: bool = False) -> list[int]:
        if info.phase == "propose":
            return [STAND, PROPOSE] if fallback == STAND else [PROPOSE, STAND]
        if info.phase == "answer":
            return [ACCEPT, REFUSE] if fallback == ACCEPT else [REFUSE, ACCEPT]
        # Discard: the expert's choice first, then "keep the best k" for every allowed
        # k, then (when ``wide_discards``) every other legal discard.
        legal = set(info.legal)
        trump = info.trump
        order = sorted(card_list(info.hand), key=lambda c: (c >> 3 != trump, -(c & 7)))
        out = [fallback]
        for keep in range(5):
            mask = 0
            for c in order[keep:]:
                mask |= 1 << c
            a = DISCARD | mask
            if a in legal and a not in out:
                out.append(a)
        if DISCARD in legal and DISCARD not in out:
            out.append(DISCARD)
        if wide:
            # Throwing a trump while keeping a side card is (nearly) never better than
            # throwing the side card: leave such discards out.
            tmask = SUIT_MASKS[trump]
            for a in info.legal:
                if a in out:
                    continue
                thrown = a & ~DISCARD
                if thrown & tmask and info.hand & ~thrown & ~tmask:
                    continue
                out.append(a)
        return out

    def _exchange(self, info: ViewInfo, rng: random.Random, deadline: float, fallback: int) -> int:
        # Every discard only when there is time to sample them (else noise picks one).
        wide = self.wide_discards and deadline - self.clock() >= WIDE_MIN_MS / 1000.0
        cands = self._candidates(info, fallback, wide)
        self.stats.candidates = len(cands)
        if len(cands) == 1:
            return cands[0]
        me, opp = info.seat, info.opp
        unseen = list(card_list(info.unseen))
        model = self._model(info)
        template = _template(info)
        stock_n = info.stock
        win = self.win_value
        m = len(cands)
        sums = [0.0] * m
        sq = [0.0] * m
        live = list(range(m))  # candidates still searched; the expert's (0) always is
        prune_at = PRUNE_EVERY
        limit = self.exchange_samples
        clock = self.clock
        n = 0
        tries = 0
        while n < limit and tries < 20 * limit:
            if clock() >= deadline:
                break
            tries += 1
            rng.shuffle(unseen)
            hand = 0
            for c in unseen[:5]:
                hand |= 1 << c
            w = model.weight(hand)
            if w < 1.0 and rng.random() >= w:
                continue
            stock = tuple(unseen[5 : 5 + stock_n])
            deck = (0,) * (32 - stock_n) + stock
            values = []
            for i in live:
                st = template.clone()
                st.deck = deck
                st.hands[opp] = hand
                values.append(_rollout(st, me, cands[i], win))
                if len(values) < len(live) and clock() >= deadline:
                    break
            if len(values) < len(live):
                break
            v0 = values[0]
            for i, v in zip(live, values, strict=True):
                sums[i] += v
                sq[i] += (v - v0) ** 2
            n += 1
            if n >= prune_at and len(live) > KEEP_AFTER_PRUNE:
                # Successive halving on the shared samples: keep the best half.
                prune_at *= 2
                ranked = sorted(live[1:], key=lambda i: -sums[i])
                keep = max(KEEP_AFTER_PRUNE - 1, len(ranked) // 2)
                live = [0, *sorted(ranked[:keep])]
        self.stats.tries = tries
        self.stats.samples = n
        if n < 2:
            return fallback
        if self.temperature > 0.0:
            return self._soften([cands[i] for i in live], [sums[i] / n for i in live], rng)
        best_i = 0
        best_gain = 0.0
        # On few samples a plain best mean is mostly noise: then ask for a margin.
        margin = self.exchange_margin if n >= FEW_SAMPLES else max(1.0, self.exchange_margin)
        for i in live[1:]:
            mean = (sums[i] - sums[0]) / n
            var = max(0.0, sq[i] / n - mean * mean) * n / (n - 1)
            gain = mean - margin * math.sqrt(var / n)
            if mean > 0 and gain > best_gain:
                best_i, best_gain = i, gain
        return cands[best_i]

    def _soften(self, actions: list[int], means: list[float], rng: random.Random) -> int:
        """One of ``actions`` at random, likelier the closer its mean is to the best."""
        best = max(means)
        t = self.temperature
        weights = [math.exp((m - best) / t) for m in means]
        return rng.choices(actions, weights)[0]


def _template(info: ViewInfo) -> State:
    """A rules state matching the view, with the opponent's hand and stock left blank."""
    s = new_game(info.rules, info.dealer)
    s.scores = info.scores[:]
    s.deal_number = 1
    s.phase = _PHASES[info.phase]
    s.to_act = info.seat
    s.hands = [0, 0]
    s.hands[info.seat] = info.hand
    s.stock_pos = 32 - info.stock
    s.turnup = info.turnup
    s.trump = info.trump
    s.vulnerable = info.vulnerable[:]
    s.proposals = info.proposals
    s.exchanges = info.exchanges
    s.discards = [[], []]
    if info.my_discards:
        s.discards[info.seat].append(info.my_discards)
    s.tricks = info.tricks[:]
    s.lead = -1
    s.trick_cards = []
    s.played = info.played[:]
    s.king_done = info.turnup & 7 == KING
    s.marked = info.marked
    s.deal_points = info.deal_points[:]
    s.events = []
    return s


_DEFAULT = SearchEngine()


def choose(view: Observation, rng: random.Random) -> str:
    """The search engine's action at the default budget."""
    return _DEFAULT.choose(view, rng)
