"""Imports only go downward: the protocol, the rules core, the engines, then the arbiter.

:mod:`protocol` is the bottom layer and imports no other project package, so a bot
can use it without the arbiter; the rules core (:mod:`arbiter.cards`,
:mod:`arbiter.rules`, :mod:`arbiter.view`) is pure and imports only itself and the
protocol (for the wire types it builds); the engines build on the protocol, the core
and their own shared modules, and an engine's package never on another engine's;
the rest of the arbiter builds on everything below it, and nothing outside the
engines imports an engine (listed exceptions aside).  Imports are read with
:mod:`ast` from the source files, those inside functions too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ("arbiter", "protocol", "engines", "tests")
CORE = frozenset({"arbiter.cards", "arbiter.rules", "arbiter.view"})

EXCEPTIONS: dict[tuple[str, str], str] = {
    ("arbiter.sandbox", "engines"): (
        "imports the package only to find its directory, which every sandboxed bot may read"
    ),
    ("engines.ceiling", "engines.search.strategy"): (
        "the in-process ceiling player values exchanges with the search engine's rollout"
    ),
}
"""Imports allowed against the layering, (importer, imported) -> why."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Project modules (or packages) that the file imports, as dotted names."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # ``from engines import seeded_rng`` and ``from engines import expert_policy``:
            # a name may be a submodule, so count it when a file of that name exists.
            found.add(base)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if _exists(sub):
                    found.add(sub)
    return {m for m in found if m.split(".")[0] in PROJECT}


def _exists(module: str) -> bool:
    path = ROOT.joinpath(*module.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _sources(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


IMPORTS = {_module_name(p): _imports(p) for package in PROJECT[:3] for p in _sources(package)}


def _within(module: str, prefixes: set[str] | frozenset[str]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _engine_package(module: str) -> str | None:
    """``search`` for ``engines.search.strategy``; None for the shared modules."""
    parts = module.split(".")
    if len(parts) >= 2 and parts[0] == "engines" and (ROOT / "engines" / parts[1]).is_dir():
        return parts[1]
    return None


def _violations(check: str, imports: dict[str, set[str]] = IMPORTS) -> list[str]:
    out = []
    for importer, imported in sorted(imports.items()):
        for target in sorted(imported):
            if (importer, target) in EXCEPTIONS or target == importer:
                continue
            if check == "core" and importer in CORE and not _within(target, CORE | {"protocol"}):
                out.append(f"{importer} imports {target}: the rules core builds on protocol only")
            elif (
                check == "protocol"
                and _within(importer, {"protocol"})
                and not _within(target, {"protocol"})
            ):
                out.append(f"{importer} imports {target}: protocol imports no other package")
            elif (
                check == "engines"
                and importer.startswith("engines")
                and not _within(target, CORE | {"protocol", "engines"})
            ):
                out.append(f"{importer} imports {target}: outside the core, protocol, engines")
            elif check == "engine-packages" and importer.startswith("engines."):
                own, other = _engine_package(importer), _engine_package(target)
                if other is not None and other != own:
                    out.append(f"{importer} imports {target}: another engine's package")
            elif (
                check == "no-engines"
                and not _within(importer, {"engines"})
                and _within(target, {"engines"})
            ):
                out.append(f"{importer} imports {target}: the arbiter must not need the engines")
    return out


@pytest.mark.parametrize("check", ["core", "protocol", "engines", "engine-packages", "no-engines"])
def test_imports_go_downward(check: str) -> None:
    """Each layer imports only from the layers below it (listed exceptions aside)."""
    assert _violations(check) == []


def test_the_scan_sees_the_imports() -> None:
    """The scanner finds real imports, nested ones and submodules named in ``from`` lists."""
    assert "arbiter.cards" in IMPORTS["arbiter.rules"]
    assert "engines.double_dummy" in IMPORTS["engines.search.strategy"]
    assert "engines" in IMPORTS["arbiter.sandbox"]  # imported inside a function
    assert CORE <= IMPORTS.keys() and "engines.search.bot" in IMPORTS


def test_the_protocol_check_catches_an_arbiter_import() -> None:
    """A protocol module importing the arbiter is reported (the check is not vacuous)."""
    imports = {**IMPORTS, "protocol.messages": IMPORTS["protocol.messages"] | {"arbiter.view"}}
    assert _violations("protocol", imports) == [
        "protocol.messages imports arbiter.view: protocol imports no other package"
    ]


def test_every_exception_is_still_needed() -> None:
    """A listed exception that no longer occurs is removed from the list."""
    for importer, imported in EXCEPTIONS:
        assert imported in IMPORTS.get(importer, set()), (importer, imported)
