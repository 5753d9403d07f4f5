"""Tournament configuration: YAML decoded into typed Structs, with errors that point.

A typo or a wrong type fails with the key path and the line in the file
(``tournament.yaml:14: $.engines[2].comand: unknown key``) instead of being ignored.
PyYAML silently keeps the last of two equal keys; we reject duplicates instead.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

import msgspec
import yaml

from arbiter.rules import Rules, RulesError, Seed, make_rules
from arbiter.sandbox import DEFAULT_PROCESSES, SandboxMode
from arbiter.schedule import Format

__all__ = [
    "BUNDLED_ENGINES",
    "NEXT_GAME_DEALER_REFUSED",
    "ConfigError",
    "EngineConfig",
    "FaultPolicy",
    "FaultPolicyName",
    "Limits",
    "ResolvedConfig",
    "RulesConfig",
    "TimeControl",
    "TournamentConfig",
    "builtin_argv",
    "check_config",
    "engine_argv",
    "load_config",
    "parse_config",
    "read_resolved",
    "rule_options",
]

BUNDLED_ENGINES = ("random", "greedy", "expert", "search")
"""Engines shipped in ``engines/``: usable by name alone."""

Positive = Annotated[int, msgspec.Meta(ge=1)]
NonNegative = Annotated[int, msgspec.Meta(ge=0)]


class ConfigError(ValueError):
    """A configuration that cannot be used; the message names the key and, if known, the line."""


class _Strict(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """Config sections reject unknown keys, so a typo is an error, not a silent default."""


class EngineConfig(_Strict, frozen=True):
    """One engine of the tournament."""

    name: str
    """Unique name used in results."""
    command: str | list[str] | None = None
    """Command line (a string split like a shell would, or a list). Omit for a bundled engine."""
    builtin: str | None = None
    """Name of a bundled engine (random, greedy, expert, search); defaults to ``name``."""
    cwd: str | None = None
    """Working directory (relative to the config file)."""
    env: dict[str, str] = msgspec.field(default_factory=dict)
    """Extra environment variables."""
    options: dict[str, Any] = msgspec.field(default_factory=dict)
    """Options passed to the bot in the handshake."""
    allow_paths: list[str] = msgspec.field(default_factory=list)
    """Further files or directories the sandboxed bot may read (relative to the config file)."""
    write_paths: list[str] = msgspec.field(default_factory=list)
    """Directories the sandboxed bot may write (relative to the config file)."""
    network: bool = False
    """Let the sandboxed bot use the network (off: a private loopback only)."""
    inherit_env: bool = False
    """Pass the operator's whole environment on (off: PATH, HOME, locale, TZ and ``env``)."""


class RulesConfig(_Strict, frozen=True):
    """Rule set: a preset and options on top (see the Rules section of the README)."""

    preset: str = "default"
    options: dict[str, Any] = msgspec.field(default_factory=dict)


class TimeControl(_Strict, frozen=True):
    """Per-decision limit, or a game clock (bank + increment) with a grace margin."""

    per_move_ms: Positive | None = 1000
    """Time for each decision (used when no clock is set)."""
    clock_ms: Positive | None = None
    """Bank per game and bot; when set, decisions draw on it instead of ``per_move_ms``."""
    increment_ms: NonNegative = 0
    """Added to the bank after each decision."""
    grace_ms: NonNegative = 100
    """Slack allowed beyond the limit before a timeout is declared (pipe and scheduling lag)."""
    handshake_ms: Positive = 10_000
    """Deadline for the handshake (bot start-up included)."""


FaultPolicyName = Literal["forfeit_game", "forfeit_match", "random_substitute"]
"""The fault policies (README "Faults"; :mod:`arbiter.game` carries them out)."""


class FaultPolicy(_Strict, frozen=True):
    """What a bot's fault costs."""

    policy: FaultPolicyName = "forfeit_game"
    """forfeit_game: the offender loses the game and is restarted; forfeit_match: it loses
    the rest of its games against that opponent; random_substitute: a random legal action is
    played for it, the game is marked corrupted and the offender still loses it."""
    withdraw_after: Positive = 3
    """Faults in a row after which an engine is withdrawn from the rest of the run."""


class Limits(_Strict, frozen=True):
    """Resource limits of the bots (README "Configuration reference")."""

    memory_mb: Positive | None = None
    """Address space of each bot process (off by default)."""
    cpu_seconds: Positive | None = None
    """CPU time of each bot process (off by default)."""
    processes: Positive | None = DEFAULT_PROCESSES
    """Processes and threads a sandboxed bot runs at once, all its processes together;
    ``null``: no cap."""


class TournamentConfig(_Strict, frozen=True):
    """A whole tournament."""

    engines: list[EngineConfig]
    name: str = "tournament"
    format: Format = "round_robin"
    challenger: str | None = None
    """The engine that plays everybody in a gauntlet."""
    games_per_pairing: Positive = 20
    """Games each pairing plays (even with duplicate deals: they come in pairs)."""
    duplicate: bool = True
    """Play games in duplicate pairs (same deals, seats swapped)."""
    rules: RulesConfig = msgspec.field(default_factory=RulesConfig)
    time_control: TimeControl = msgspec.field(default_factory=TimeControl)
    faults: FaultPolicy = msgspec.field(default_factory=FaultPolicy)
    limits: Limits = msgspec.field(default_factory=Limits)
    sandbox: SandboxMode = "auto"
    """Run each bot process in a sandbox (bubblewrap): ``auto`` where the machine allows
    it (with a warning otherwise), ``on`` (refuse to run without), ``off``."""
    bot_user: str | NonNegative = "auto"
    """The user bots run as when the arena runs as root: ``auto`` (``nobody`` for
    sandboxed bots), a user name or a uid, or ``root``; an engine whose directories that
    user cannot reach is an error.  An arena not run as root runs bots as its own user."""
    isolate_deals: bool = True
    """Restart a bot before it would see deals it has already played (so that no bot can
    remember the cards of a duplicate pair); false reuses processes: faster, for bots you
    trust."""
    concurrency: Positive | None = None
    """Games played at once (default: the number of cores)."""
    seed: Seed | None = None
    """Fixes every deal and the schedule (an int or a string; only its text counts); None:
    a 128-bit secret drawn when the run starts (and recorded in
    ``OUT/config.resolved.json``, where ``--resume`` finds it)."""
    out: str = "tournaments/out"
    """Output directory (relative to the config file; ``--out`` is relative to the shell's
    working directory)."""

    def resolved_rules(self) -> Rules:
        """The validated rule set."""
        return make_rules(self.rules.preset, **self.rules.options)


class ResolvedConfig(TournamentConfig, frozen=True):
    """``OUT/config.resolved.json``: the config a run was played with, seed included, and
    what it resolved to.  ``--resume`` compares it with the config given again;
    ``stats`` and ``merge`` rebuild the schedule from it.
    """

    rules_resolved: Rules | None = None
    """The rule set :meth:`TournamentConfig.resolved_rules` gave (every option spelled)."""
    shard: str | None = None
    """``K/N`` when the run played one shard of the schedule."""
    versions: dict[str, str] = msgspec.field(default_factory=dict)
    """Versions of the arbiter, Python, trio and msgspec that played the run."""

    RUN_KEYS: ClassVar[tuple[str, ...]] = (
        "isolate_deals",
        "engines",
        "format",
        "challenger",
        "games_per_pairing",
        "duplicate",
        "rules_resolved",
        "seed",
        "shard",
        "time_control",
        "faults",
    )
    """Keys whose change would make a resumed run differ from the interrupted one."""

    def differences(self, other: ResolvedConfig) -> list[str]:
        """The :attr:`RUN_KEYS` in which ``other`` differs from this one."""
        return [k for k in self.RUN_KEYS if getattr(self, k) != getattr(other, k)]


def read_resolved(path: Path) -> ResolvedConfig:
    """Read a ``config.resolved.json``; :class:`ConfigError` naming the file and problem."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: unreadable ({exc.strerror})") from None
    try:
        return msgspec.json.decode(data, type=ResolvedConfig)
    except msgspec.DecodeError as exc:
        raise ConfigError(f"{path}: not a resolved config ({exc})") from None


def builtin_argv(name: str) -> list[str]:
    """The command line of the bundled engine ``name``.

    This interpreter (no PATH lookup, no pyenv shim), in isolated mode (``-I``): with
    ``-m`` alone Python would import from the working directory first, where a bot's
    files may be (an ``engines/`` package of its own, run in place of ours).
    """
    return [sys.executable, "-I", "-m", f"engines.{name}.bot"]


def engine_argv(engine: EngineConfig, base: Path) -> tuple[list[str], str | None]:
    """The command line and working directory of an engine; relative paths from ``base``.

    ``base`` is the config file's directory (the shell's for engines named on the command
    line).  An engine with a command runs in its ``cwd`` (relative to ``base``), or in
    ``base`` itself, so that a program path like ``./bot`` and a script argument like
    ``bots/mine.py`` mean the same wherever the arbiter is started.  A program path with a
    ``/`` is made absolute, so that messages about it name the file.
    """
    cwd = os.path.abspath(base / engine.cwd) if engine.cwd else None
    if engine.command is None:
        builtin = engine.builtin or engine.name
        return builtin_argv(builtin), cwd
    argv = shlex.split(engine.command) if isinstance(engine.command, str) else list(engine.command)
    if cwd is None:
        cwd = os.path.abspath(base)
    if argv and "/" in argv[0]:
        argv[0] = os.path.join(cwd, os.path.expanduser(argv[0]))
        argv[0] = os.path.normpath(argv[0])
    return argv, cwd


# ----------------------------------------------------------------------------- loading


class _DupCheckLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicated mapping keys."""


def _construct_mapping(loader: _DupCheckLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)
        if key in seen:
            raise ConfigError(
                f"line {key_node.start_mark.line + 1}: key {key!r} appears twice "
                f"(first on line {seen[key] + 1})"
            )
        seen[key] = key_node.start_mark.line
    return loader.construct_mapping(node)


_DupCheckLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    _construct_mapping,
)

_PATH_RE = re.compile(r" - at `(\$[^`]*)`$")
_STEP_RE = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


def _line_of(root: yaml.Node | None, path: str) -> int | None:
    """Line (1-based) of the node at a msgspec path like ``$.engines[2].command``."""
    node = root
    line = None
    for key, index in _STEP_RE.findall(path[1:]):
        if node is None:
            break
        line = node.start_mark.line + 1
        if key and isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if k.value == key), None)
        elif index and isinstance(node, yaml.SequenceNode):
            i = int(index)
            node = node.value[i] if i < len(node.value) else None
        else:
            node = None
    if node is not None:
        line = node.start_mark.line + 1
    return line


def parse_config(text: str, source: str = "<config>") -> TournamentConfig:
    """Decode and validate a YAML config; raise :class:`ConfigError` naming key and line."""
    try:
        data = yaml.load(text, Loader=_DupCheckLoader)
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        context = getattr(exc, "context", None)
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark is not None else source
        what = f"{problem} ({context})" if context else problem
        raise ConfigError(f"{where}: not valid YAML: {what}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the config must be a mapping of keys (engines:, format:...)")
    nul = _nul_path(data, "$")
    if nul is not None:
        line = _line_of(root, nul)
        where = f"{source}:{line}" if line else source
        # No command line, path or variable can hold one; passed on, it would end a
        # string early and make the rest something else (an option of the sandbox).
        raise ConfigError(f"{where}: {nul}: contains a NUL character (\\0)")
    if isinstance(data.get("sandbox"), bool):
        # YAML 1.1 reads a bare on/off as a boolean: `sandbox: off` means "off".
        data["sandbox"] = "on" if data["sandbox"] else "off"
    try:
        config = msgspec.convert(data, TournamentConfig)
    except msgspec.ValidationError as exc:
        msg = str(exc)
        m = _PATH_RE.search(msg)
        path = m.group(1) if m else "$"
        detail = msg[: m.start()] if m else msg
        unknown = re.match(r"Object contains unknown field `([^`]+)`", detail)
        if unknown:
            path = f"{path}.{unknown.group(1)}"
            detail = f"unknown key {unknown.group(1)!r}"
        missing = re.match(r"Object missing required field `([^`]+)`", detail)
        if missing:
            detail = f"missing required key {missing.group(1)!r}"
        if "got `bool`" in detail:
            detail += " (YAML reads yes/no/on/off as booleans: put the value in quotes)"
        line = _line_of(root, path)
        where = f"{source}:{line}" if line else source
        raise ConfigError(f"{where}: {path}: {detail}") from None
    _check(config, source, root)
    return config


def _nul_path(value: Any, path: str) -> str | None:
    """The key path of the first string (key or value) holding a NUL character, or None."""
    if isinstance(value, str):
        return path if "\0" in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            inner = f"{path}.{key}"
            if isinstance(key, str) and "\0" in key:
                return inner
            found = _nul_path(item, inner)
            if found is not None:
                return found
    if isinstance(value, list):
        for i, item in enumerate(value):
            found = _nul_path(item, f"{path}[{i}]")
            if found is not None:
                return found
    return None


_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")


def _check(config: TournamentConfig, source: str, root: yaml.Node | None) -> None:
    """Checks that span several keys; errors name the key path and its line."""

    def fail(path: str, message: str) -> ConfigError:
        line = _line_of(root, path)
        return ConfigError(
            f"{source}:{line}: {path}: {message}" if line else f"{source}: {path}: {message}"
        )

    names = [e.name for e in config.engines]
    for i, e in enumerate(config.engines):
        if not _NAME_RE.fullmatch(e.name):
            raise fail(
                f"$.engines[{i}].name",
                f"engine name {e.name!r} must start with a letter or digit and use only "
                "letters, digits and . _ + -",
            )
        if names.index(e.name) != i:
            raise fail(f"$.engines[{i}].name", f"engine name {e.name!r} is used twice")
        if e.command is None and (e.builtin or e.name) not in BUNDLED_ENGINES:
            raise fail(
                f"$.engines[{i}]",
                f"engine {e.name!r} has no command and is not a bundled engine "
                f"({', '.join(BUNDLED_ENGINES)})",
            )
        for key, value in e.options.items():
            if not isinstance(value, str | int | float | bool | None):
                raise fail(
                    f"$.engines[{i}].options.{key}",
                    "options are passed to the bot in its hello and must be plain values "
                    f"(string, number, boolean, null), not {type(value).__name__}",
                )
        if e.command is not None and not (
            e.command if isinstance(e.command, list) else e.command.strip()
        ):
            raise fail(f"$.engines[{i}].command", "empty command")
    if len(config.engines) < 2:
        raise fail("$.engines", "a tournament needs at least two engines")
    if config.seed == "":
        raise fail("$.seed", "empty seed: leave seed unset for a random 128-bit seed")
    if config.format == "gauntlet":
        if config.challenger is None:
            raise fail("$.format", "format gauntlet needs a challenger (key challenger:)")
        if config.challenger not in names:
            raise fail(
                "$.challenger",
                f"{config.challenger!r} is not one of the engines ({', '.join(names)})",
            )
    if config.duplicate and config.games_per_pairing % 2:
        raise fail(
            "$.games_per_pairing",
            f"{config.games_per_pairing} is odd; with duplicate deals games come in pairs, "
            "so it must be even",
        )
    try:
        config.resolved_rules()
    except RulesError as exc:
        raise fail("$.rules", str(exc)) from None
    if "next_game_dealer" in config.rules.options:
        raise fail("$.rules.options.next_game_dealer", NEXT_GAME_DEALER_REFUSED)


NEXT_GAME_DEALER_REFUSED = (
    "the arena cannot honour next_game_dealer: its games do not chain (they are played "
    "in parallel, in shards and resumed in any order, and both games of a duplicate pair "
    "must start with the same dealer), so every game's first dealer is drawn from the "
    "seed; remove the option"
)
"""Why ``rules.options.next_game_dealer`` is refused rather than silently ignored."""


def rule_options(preset: str, terms: Iterable[str]) -> dict[str, Any]:
    """The rules options of command-line ``--rule KEY=VALUE`` terms, checked with ``preset``.

    Each value is read as YAML reads it in a config's ``rules: options:`` (``7``, ``true``,
    ``null``, ``alternate``); ``next_game_dealer`` is refused as in a config.  Raises
    :class:`ConfigError` naming the term, or the rules error (``--rules/--rule: ...``).
    """
    options: dict[str, Any] = {}
    for term in terms:
        key, sep, text = term.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"--rule {term!r}: expected KEY=VALUE, e.g. --rule target=7")
        if key == "next_game_dealer":
            raise ConfigError(f"--rule {term}: {NEXT_GAME_DEALER_REFUSED}")
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError:
            value = None  # refused just below, like a list or a mapping
        else:
            if isinstance(value, str | int | float | bool | None):
                options[key] = value
                continue
        raise ConfigError(f"--rule {term!r}: the value must be a plain value (7, true, any)")
    try:
        make_rules(preset, **options)
    except RulesError as exc:
        raise ConfigError(f"--rules/--rule: {exc}") from None
    return options


def check_config(config: TournamentConfig, source: str) -> TournamentConfig:
    """Run the checks of :func:`parse_config` on a config built in code; ``source`` names it."""
    _check(config, source, None)
    return config


def load_config(path: str | os.PathLike[str]) -> TournamentConfig:
    """Read and validate a YAML config file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config {str(p)!r}: {exc.strerror}") from None
    return parse_config(text, str(p))
