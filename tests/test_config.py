"""Config decoding: every bad config gives its precise message, with key path and line."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest

from arbiter.cli import default_config_text
from arbiter.cli import main as cli_main
from arbiter.config import ConfigError, engine_argv, load_config, parse_config, rule_options

GOOD = """\
engines:
  - name: random
  - name: greedy
"""

BAD_CASES = [
    (
        "typo-in-engine-key",
        "engines:\n  - name: random\n  - name: greedy\n    comand: ./x\n",
        "x.yaml:4: $.engines[1].comand: unknown key 'comand'",
    ),
    (
        "typo-top-level",
        GOOD + "gams_per_pairing: 4\n",
        "x.yaml:4: $.gams_per_pairing: unknown key 'gams_per_pairing'",
    ),
    (
        "wrong-type",
        GOOD + "games_per_pairing: many\n",
        "x.yaml:4: $.games_per_pairing: Expected `int`, got `str`",
    ),
    (
        "yaml-boolean-name",
        "engines:\n  - name: no\n    command: ./x\n  - name: greedy\n",
        "x.yaml:2: $.engines[0].name: Expected `str`, got `bool` (YAML reads yes/no/on/off",
    ),
    (
        "duplicate-key",
        GOOD + "seed: 1\nseed: 2\n",
        "x.yaml: line 5: key 'seed' appears twice (first on line 4)",
    ),
    (
        "duplicate-engine",
        "engines:\n  - name: random\n  - name: random\n",
        "x.yaml:3: $.engines[1].name: engine name 'random' is used twice",
    ),
    (
        "unknown-bundled",
        "engines:\n  - name: stockfish\n  - name: random\n",
        "$.engines[0]: engine 'stockfish' has no command and is not a bundled engine",
    ),
    ("one-engine", "engines:\n  - name: random\n", "a tournament needs at least two engines"),
    ("odd-games", GOOD + "games_per_pairing: 3\n", "$.games_per_pairing: 3 is odd"),
    (
        "gauntlet-no-challenger",
        GOOD + "format: gauntlet\n",
        "x.yaml:4: $.format: format gauntlet needs a challenger",
    ),
    (
        "gauntlet-unknown-challenger",
        GOOD + "format: gauntlet\nchallenger: expert\n",
        "$.challenger: 'expert' is not one of the engines",
    ),
    ("bad-format", GOOD + "format: swiss\n", "x.yaml:4: $.format: Invalid enum value 'swiss'"),
    (
        "bad-rule-option",
        GOOD + "rules:\n  options: {target: 6}\n",
        "$.rules: bad rules option: target",
    ),
    (
        "unknown-rule-option",
        GOOD + "rules:\n  options: {trget: 5}\n",
        "$.rules: unknown rules option 'trget'",
    ),
    ("unknown-preset", GOOD + "rules:\n  preset: hoyle\n", "unknown rules preset 'hoyle'"),
    (
        "negative-time",
        GOOD + "time_control:\n  per_move_ms: -5\n",
        "x.yaml:5: $.time_control.per_move_ms: Expected `int` >= 1",
    ),
    (
        "bad-policy",
        GOOD + "faults:\n  policy: ignore\n",
        "x.yaml:5: $.faults.policy: Invalid enum value 'ignore'",
    ),
    ("missing-engines", "seed: 3\n", "missing required key 'engines'"),
    ("not-a-mapping", "- a\n- b\n", "the config must be a mapping"),
    (
        "invalid-yaml",
        "engines: [\n",
        "x.yaml:2:1: not valid YAML: expected the node content, but found '<stream end>'",
    ),
    (
        "bad-indentation",
        "engines:\n  - name: a\n   command: x\n",
        "x.yaml:3:4: not valid YAML: expected <block end>, but found '<block mapping start>'",
    ),
    (
        "bad-engine-name",
        "engines:\n  - name: a~b\n    command: x\n  - name: random\n",
        "x.yaml:2: $.engines[0].name: engine name 'a~b' must start with a letter or digit",
    ),
    (
        "nested-option",
        "engines:\n  - name: random\n    options: {a: {b: 1}}\n  - name: greedy\n",
        "$.engines[0].options.a: options are passed to the bot in its hello",
    ),
    ("empty-seed", GOOD + "seed: ''\n", "x.yaml:4: $.seed: empty seed"),
    ("float-seed", GOOD + "seed: 1.5\n", "x.yaml:4: $.seed: Expected `int | str | null`"),
    (
        "empty-command",
        "engines:\n  - name: a\n    command: '  '\n  - name: random\n",
        "$.engines[0].command: empty command",
    ),
]


@pytest.mark.parametrize(
    ("text", "message"), [(t, m) for _, t, m in BAD_CASES], ids=[i for i, _, _ in BAD_CASES]
)
def test_bad_config_message(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(text, "x.yaml")
    assert message in str(info.value)


def test_defaults() -> None:
    c = parse_config(GOOD)
    assert (c.format, c.games_per_pairing, c.duplicate, c.seed) == ("round_robin", 20, True, None)
    assert c.time_control.per_move_ms == 1000 and c.faults.policy == "forfeit_game"
    assert c.faults.withdraw_after == 3 and c.concurrency is None
    assert c.resolved_rules().target == 5


def test_engine_command_forms(tmp_path: Path) -> None:
    c = parse_config(
        "engines:\n  - name: a\n    command: ./bot --fast 'x y'\n    cwd: sub\n"
        "  - name: b\n    command: [node, bot.js]\n  - name: random\n"
    )
    argv, cwd = engine_argv(c.engines[0], tmp_path)
    # A program path is made absolute against the engine's directory.
    assert argv == [str(tmp_path / "sub" / "bot"), "--fast", "x y"] and cwd == str(tmp_path / "sub")
    # Without cwd: a command runs in the config's directory, a bundled engine anywhere.
    assert engine_argv(c.engines[1], tmp_path) == (["node", "bot.js"], str(tmp_path))
    assert engine_argv(c.engines[2], tmp_path)[0][1:] == ["-I", "-m", "engines.random.bot"]


def test_shipped_configs_are_valid() -> None:
    parse_config(default_config_text())
    for path in sorted(Path(__file__).resolve().parents[1].joinpath("configs").glob("*.yaml")):
        load_config(path)


def test_missing_config_file_is_a_clear_cli_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(["tournament", str(tmp_path / "nope.yaml")]) == 2
    assert "cannot read config" in capsys.readouterr().err


def test_cli_bad_shard_and_sprt(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["tournament", "--shard", "5/3"]) == 2
    assert "bad shard '5/3'" in capsys.readouterr().err
    assert cli_main(["match", "random", "greedy", "--sprt", "elo0=5", "elo1=1"]) == 2
    assert "elo1 > elo0" in capsys.readouterr().err
    assert cli_main(["match", "random", "greedy", "--games", "3"]) == 2
    assert "even number" in capsys.readouterr().err


def test_cli_match_refuses_an_unknown_engine(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["match", "random", "rnadom"]) == 2
    err = capsys.readouterr().err
    assert "'rnadom' is neither a bundled engine (random, greedy, expert, search)" in err


def test_cli_match_names_a_command_after_its_script() -> None:
    from arbiter.cli import _engine

    assert _engine("random").name == "random"
    assert _engine("/bin/sh bots/my-bot.py --fast").name == "my-bot"
    assert _engine("/bin/sh").command == "/bin/sh"


def test_cli_resume_of_the_default_run_needs_out(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["tournament", "--resume"]) == 2
    assert "--resume needs --out DIR" in capsys.readouterr().err


@pytest.mark.parametrize(
    "seed",
    [2**63 - 1, 2**64, 2**127, 2**200, -(2**70), "0123456789abcdef0123456789abcdef", "clé"],
    ids=["int64", "2^64", "2^127", "2^200", "big-negative", "hex-string", "non-ascii"],
)
def test_seed_survives_yaml_and_the_resolved_json(seed: int | str) -> None:
    """Seeds beyond 64 bits and strings come through YAML, msgspec and JSON unchanged."""
    text = GOOD + f"seed: {seed if isinstance(seed, int) else repr(seed)}\n"
    config = parse_config(text)
    assert config.seed == seed and type(config.seed) is type(seed)
    again = msgspec.json.decode(msgspec.json.encode(config), type=type(config))
    assert again.seed == seed and type(again.seed) is type(seed)


def test_next_game_dealer_is_refused_with_the_reason(tmp_path: Path) -> None:
    """The arena never chains games, so the option would do nothing: it is an error."""
    path = tmp_path / "t.yaml"
    path.write_text(
        "engines: [{name: random}, {name: greedy}]\n"
        "duplicate: false\n"
        "rules:\n  options:\n    next_game_dealer: loser\n"
    )
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == (
        f"{path}:5: $.rules.options.next_game_dealer: the arena cannot honour "
        "next_game_dealer: its games do not chain (they are played in parallel, in shards "
        "and resumed in any order, and both games of a duplicate pair must start with the "
        "same dealer), so every game's first dealer is drawn from the seed; remove the option"
    )


@pytest.mark.parametrize(
    ("terms", "error"),
    [
        (["target"], "--rule 'target': expected KEY=VALUE, e.g. --rule target=7"),
        (["=7"], "--rule '=7': expected KEY=VALUE"),
        (["target=[5, 7]"], "--rule 'target=[5, 7]': the value must be a plain value"),
        (["target=9"], "--rules/--rule: bad rules option: target"),
        (["target="], "--rules/--rule: bad rules option: target"),
        (["next_game_dealer=loser"], "the arena cannot honour next_game_dealer"),
    ],
)
def test_command_line_rules_are_read_and_refused_as_in_a_config(
    terms: list[str], error: str
) -> None:
    """match, check and play read --rule with one function: same values, same refusals."""
    with pytest.raises(ConfigError, match=re.escape(error)):
        rule_options("default", terms)


def test_command_line_rule_values_are_typed_as_yaml_types_them() -> None:
    assert rule_options(
        "cavendish", ["target=7", "must_trump=off", "max_points_per_deal=null"]
    ) == {
        "target": 7,
        "must_trump": False,
        "max_points_per_deal": None,
    }


def test_a_nul_character_anywhere_in_a_config_is_refused_with_its_key() -> None:
    """A NUL would end a string where the sandbox's options are passed on, turning the
    rest of an engine's env value into options of its own."""
    text = (
        "engines:\n"
        "  - name: mine\n"
        "    command: python3 bot.py\n"
        '    env: {FOO: "x\\0--bind\\0/\\0/host"}\n'
        "  - name: random\n"
    )
    with pytest.raises(ConfigError, match=r"t.yaml:4: \$\.engines\[0\]\.env\.FOO: contains a NUL"):
        parse_config(text, "t.yaml")
    with pytest.raises(ConfigError, match=r"\$\.engines\[0\]\.command\[1\]: contains a NUL"):
        parse_config('engines:\n  - {name: a, command: [python3, "b\\0"]}\n  - {name: b}\n', "t")
