"""Locking bots in: a private view of the machine per bot process, and the arbiter's own guard.

A bot is a hostile program.  Run as the arbiter's user with nothing around it, it can
read the output directory (the journal, the resolved config with the seed), open
``/proc/<opponent>/fd/1`` and write lines into its opponent's stdout, read the
arbiter's memory, or ``setsid()`` and outlive the run.  This module closes those doors.

The sandbox
    Each bot process runs under `bubblewrap <https://github.com/containers/bubblewrap>`_
    (``bwrap``, packaged by every Linux distribution and used by Flatpak), which sets up
    kernel namespaces without any code of ours running as the child:

    - its own PID namespace: the bot sees no other process, and when the namespace's
      init dies every process in it dies, ``setsid`` or not;
    - its own mount view, built from nothing: read-only system directories (``/usr``,
      the library directories, a short list of ``/etc`` files), the Python runtime and
      the arena's own packages (public code the bundled engines import), the engine's
      own directory, and what its config grants; a private ``/tmp`` (also ``HOME``), a
      minimal ``/dev`` and a ``/proc`` of its own namespace.  The output directory, the
      config file and other engines' directories are hidden even when they lie inside
      a directory the bot may read;
    - no network unless granted, no capabilities, and ``--die-with-parent``.

    We chose bubblewrap over home-made ``unshare``/``mount`` calls (a privileged code
    path of our own in the child, easy to get subtly wrong), over nsjail and firejail
    (not packaged everywhere, larger attack surface as setuid programs) and over
    containers (a daemon, images, root).  It costs a few milliseconds per bot start
    (``bench/bench_sandbox.py`` measures it).

The arbiter's guard (holds with or without the sandbox)
    :func:`guard_arbiter` marks the arbiter non-dumpable (other processes of the same
    user cannot read its memory or open its file descriptors through ``/proc``) and a
    *child subreaper*: a bot's descendants that escape its process group with
    ``setsid()`` are re-parented to the arbiter instead of init, and
    :func:`reap_escapees` kills them at the end of each game.  Bot processes themselves
    get ``PR_SET_PDEATHSIG`` (see :mod:`arbiter.bot`), so they die with the arbiter even
    when it is killed with SIGKILL.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import glob
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

__all__ = [
    "MINIMAL_ENV_KEYS",
    "RUN_MARKERS",
    "SCAN_LIMIT",
    "SYSTEM_PATHS",
    "SandboxConflict",
    "SandboxMode",
    "SandboxPlan",
    "SandboxUnavailable",
    "arena_paths",
    "find_runs",
    "guard_arbiter",
    "minimal_env",
    "own_dirs",
    "proc_stats",
    "reap_escapees",
    "sandbox_enabled",
    "sandbox_unavailable",
    "unsearched_warnings",
    "wrap_command",
]

SandboxMode = Literal["auto", "on", "off"]

SYSTEM_PATHS: Final = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/opt",
)
"""Read-only in every sandbox (symlinks, as on merged-/usr systems, are reproduced)."""

ETC_PATHS: Final = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/host.conf",
    "/etc/hosts",
    "/etc/gai.conf",
    "/etc/protocols",
    "/etc/services",
    "/etc/os-release",
    "/etc/alternatives",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/mime.types",
    "/etc/java-*",
    "/etc/python3*",
    "/etc/perl",
)
"""The few ``/etc`` entries runtimes read (loader, time zone, users, certificates)."""

MINIMAL_ENV_KEYS: Final = (
    "PATH",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TERM",
    # Where version managers keep interpreters: their shims on PATH need them.
    "PYENV_ROOT",
    "PYENV_VERSION",
    "ASDF_DATA_DIR",
)
"""Variables of the operator's environment a bot gets by default (plus ``HOME``)."""

BOT_HOME: Final = "/tmp"
"""``HOME`` inside the sandbox: the private, empty, writable /tmp."""


def _system_dirs() -> tuple[str, ...]:
    """The :data:`SYSTEM_PATHS` that are real directories here (a symlink such as a
    merged-/usr ``/bin`` resolves into one of them)."""
    return tuple(p for p in SYSTEM_PATHS if os.path.isdir(p) and not os.path.islink(p))


_PR_SET_DUMPABLE: Final = 4
_PR_SET_CHILD_SUBREAPER: Final = 36


@functools.cache
def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:  # not a glibc/musl system
        return None


def _prctl(option: int, value: int) -> bool:
    libc = _libc()
    if libc is None or not sys.platform.startswith("linux"):
        return False
    return int(libc.prctl(option, value, 0, 0, 0)) == 0


def minimal_env(extra: dict[str, str] | None = None, *, home: str | None = None) -> dict[str, str]:
    """The environment a bot gets: PATH, locale, time zone and HOME, then ``extra``."""
    env = {k: os.environ[k] for k in MINIMAL_ENV_KEYS if k in os.environ}
    env.setdefault("PATH", os.defpath)
    real_home = os.path.expanduser("~")
    for key, default in (("PYENV_ROOT", ".pyenv"), ("ASDF_DATA_DIR", ".asdf")):
        # The managers default to a directory under HOME, which the sandbox replaces.
        if key not in env and os.path.isdir(os.path.join(real_home, default)):
            env[key] = os.path.join(real_home, default)
    env["HOME"] = home if home is not None else os.environ.get("HOME", "/")
    if extra:
        env.update(extra)
    return env


@functools.cache
def _bwrap() -> str | None:
    return shutil.which("bwrap")


@functools.cache
def sandbox_unavailable() -> str | None:
    """Why the sandbox cannot run here, or None when it can (the answer is cached)."""
    if not sys.platform.startswith("linux"):
        return f"the sandbox needs Linux namespaces (this is {sys.platform})"
    bwrap = _bwrap()
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt install bubblewrap)"
    probe = [bwrap, *_base_args(network=False), "--", "/bin/true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap could not be run: {exc}"
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = reason[-1] if reason else f"exit status {done.returncode}"
        return (
            f"bwrap cannot create namespaces here ({detail}); unprivileged user "
            "namespaces may be disabled (sysctl kernel.unprivileged_userns_clone)"
        )
    return None


def _bind_args(flag: str, path: str) -> list[str]:
    """Arguments that make ``path`` appear at the same place, symlinks reproduced."""
    if os.path.islink(path) and os.path.dirname(path) == "/":
        # Merged /usr: /bin -> usr/bin.  Binding it would duplicate /usr/bin at /bin
        # but break programs that compare paths; a symlink is what the host has.
        return ["--symlink", os.readlink(path), path]
    return [flag, path, path]


def _base_args(*, network: bool, memory_mb: int | None = None) -> list[str]:
    args = ["--unshare-all", "--die-with-parent"]
    if network:
        args.append("--share-net")
    if os.geteuid() == 0:
        # A privileged bwrap keeps every capability unless told otherwise.
        args += ["--cap-drop", "ALL"]
    for path in SYSTEM_PATHS:
        if os.path.lexists(path):
            args += _bind_args("--ro-bind", path)
    for pattern in ETC_PATHS:
        for path in sorted(glob.glob(pattern)):
            args += ["--ro-bind", path, path]
    if network and os.path.exists("/etc/resolv.conf"):
        args += ["--ro-bind", "/etc/resolv.conf", "/etc/resolv.conf"]
    # Files in a tmpfs are memory that no limit of the bot's process counts: /dev is
    # made read-only (its devices still work), and the two writable in-memory
    # filesystems, /dev/shm and the private /tmp, are each capped at ``memory_mb``.
    size = [] if memory_mb is None else ["--size", str(memory_mb * 1024 * 1024)]
    # /proc/sys read-only: its files check only that the writer is root, not its
    # capabilities, so a bot of an arbiter run as root could otherwise set kernel
    # settings for the whole machine (kernel.core_pattern runs a program outside).
    args += ["--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys"]
    args += ["--dev", "/dev", "--remount-ro", "/dev"]
    args += [*size, "--tmpfs", "/dev/shm", *size, "--tmpfs", "/tmp"]
    return args


@functools.cache
def arena_paths() -> tuple[str, ...]:
    """Directories every bot may read: the Python runtime and the arena's packages.

    The bundled engines (and SDK bots) import ``protocol``, ``engines`` and
    ``arbiter.rules``; these are public code.  With an editable install they live in
    the source tree, which may also hold output directories: only the package
    directories themselves are granted.
    """
    import arbiter
    import engines
    import protocol

    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    paths.add(os.path.dirname(os.path.realpath(sys.executable)))
    for module in (arbiter, engines, protocol):
        for location in module.__path__:
            paths.add(os.path.realpath(location))
    return tuple(sorted(paths))


def _inside(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


RUN_MARKERS: Final = ("games.jsonl", "config.resolved.json")
"""Files that make a directory an arena run's output: a journal (every card of every
deal) or a resolved config (the seed, hence every deck)."""

_MARKER_HOLDS: Final = {"games.jsonl": "every deal", "config.resolved.json": "the seed"}

SCAN_LIMIT: Final = 100_000
"""Most directory entries searched for earlier runs' outputs in one engine's visible
directories (a bot kept in a home directory must not stall the start)."""


def find_runs(roots: Iterable[str], *, limit: int = SCAN_LIMIT) -> tuple[list[str], list[str]]:
    """Run output directories at or under ``roots``, and the roots not searched whole.

    A run directory is one holding a :data:`RUN_MARKERS` file; its inside is not
    searched further.  Symbolic links are not followed (their targets are only visible
    in the sandbox when granted themselves).  At most ``limit`` entries are read in all:
    the roots left unfinished are returned so the caller can say so.
    """
    found: list[str] = []
    unfinished: list[str] = []
    left = limit
    for root in roots:
        queue = [root]
        while queue:
            if left <= 0:
                unfinished.append(root)
                break
            path = queue.pop()
            try:
                with os.scandir(path) as it:
                    entries = list(it)
            except OSError:
                continue
            left -= len(entries)
            names = {e.name for e in entries}
            if any(m in names for m in RUN_MARKERS):
                found.append(path)
                continue
            queue.extend(e.path for e in entries if e.is_dir(follow_symlinks=False))
    return found, unfinished


class SandboxConflict(ValueError):
    """A run's output (its journal, its seed) cannot be hidden from an engine: it is or
    contains a directory the engine may read, or one of those lies inside it."""


@dataclass(frozen=True)
class SandboxPlan:
    """What one engine's sandbox shows; build the command with :func:`wrap_command`."""

    read_paths: tuple[str, ...] = ()
    """Directories and files visible read-only (absolute; missing ones are skipped)."""
    write_paths: tuple[str, ...] = ()
    """Directories visible read-write (absolute)."""
    hidden: tuple[str, ...] = ()
    """Paths hidden even when inside a visible directory (output dir, config, others)."""
    network: bool = False
    """Share the host's network (off: only a private loopback)."""
    extra_args: tuple[str, ...] = field(default=(), repr=False)
    """Further bwrap arguments (tests)."""
    unsearched: tuple[str, ...] = ()
    """Visible directories too large to be searched whole for earlier runs' outputs."""

    @classmethod
    def for_engine(
        cls,
        argv: Sequence[str],
        cwd: str | None,
        *,
        own_dir_configured: bool,
        allow_paths: Iterable[str] = (),
        write_paths: Iterable[str] = (),
        hidden: Iterable[str] = (),
        secret: Iterable[str] = (),
        network: bool = False,
    ) -> SandboxPlan:
        """The plan for an engine: its own directories, the grants, ``hidden`` masked.

        See :func:`own_dirs` for what an engine's own directories are.  A ``hidden``
        path is masked when it lies inside a visible directory, unless it is one of the
        engine's own directories or contains one (hiding it would hide the engine).
        The outputs of earlier runs found in the visible directories (:func:`find_runs`)
        and the ``secret`` paths (the run's output directory) are masked too, wherever
        they lie, system directories included.  :class:`SandboxConflict` is raised for
        a directory the engine may read that lies inside a run's output, and for a
        ``secret`` path or an earlier run's output that is or contains one (masking it
        would hide the engine or its grants).
        """
        own = set(own_dirs(argv, cwd, own_dir_configured=own_dir_configured))
        granted = {os.path.realpath(p) for p in allow_paths}
        reads = set(arena_paths()) | own | granted
        writes = {os.path.realpath(p) for p in write_paths}
        visible = own | granted | writes
        # Another run with the same seed deals the same decks: its journal or resolved
        # config where the bot may read would tell it every card.  Runs inside a
        # visible directory are masked; one that holds a visible path is refused.
        for path in sorted(visible):
            run = _run_holding(path)
            if run is not None:
                files = [
                    f"{m}: {_MARKER_HOLDS[m]}"
                    for m in RUN_MARKERS
                    if os.path.exists(os.path.join(run, m))
                ]
                may = "read and write" if path in writes else "read"
                where = "holds" if path == run else f"lies in {run}, which holds"
                raise SandboxConflict(
                    f"{path}, which the engine may {may}, {where} a run's output "
                    f"({'; '.join(files)}): move the engine or its grants out of it, or "
                    "remove that file if it is no run's"
                )
        # A version manager's root holds interpreters, not the bot's files: not searched.
        searched = {d for d in visible if os.path.isdir(d)} - {_manager_root(argv)}
        runs, unsearched = find_runs(sorted(searched))
        secrets = {os.path.realpath(p) for p in secret} | set(runs)
        masks = []
        # System directories are visible too (bound in every sandbox): an output under
        # /opt or /usr/src is masked like one in the engine's own directory.
        shown = (*reads, *writes, *_system_dirs())
        for real in sorted({os.path.realpath(h) for h in hidden} | secrets):
            holds = [v for v in sorted(own | writes | granted) if _inside(v, real)]
            if holds:
                if real in secrets:
                    raise SandboxConflict(
                        f"{real} holds a run's output (its seed and its deals) and is or "
                        f"contains {holds[0]}, which the engine may read: keep run outputs "
                        "out of engines' directories and grants (--out)"
                    )
                continue
            if real in reads:
                reads.discard(real)
            elif any(_inside(real, r) for r in shown):
                masks.append(real)
        return cls(
            read_paths=tuple(sorted(reads)),
            write_paths=tuple(sorted(writes)),
            hidden=tuple(sorted(masks)),
            network=network,
            unsearched=tuple(unsearched),
        )

    def dir_holding(self, path: str, *, writable: bool = False) -> str | None:
        """The directory this engine may read (``writable``: write) that holds ``path``,
        system directories included, or None.

        ``path`` itself may be masked from the engine; the bots of another run,
        started before ``path`` existed, would see it there (and could have written
        into it beforehand, with ``writable``).
        """
        real = os.path.realpath(path)
        if writable:
            places: Iterable[str] = self.write_paths
        else:
            places = (*self.read_paths, *self.write_paths, *_system_dirs())
        for visible in places:
            if _inside(real, visible):
                return visible
        return None


def unsearched_warnings(plans: Mapping[str, SandboxPlan | None]) -> list[str]:
    """A warning for each engine's directory too large to be searched whole for earlier
    runs' outputs (which the sandbox could then not hide), by engine name."""
    return [
        f"warning: engine {name!r}: {where} holds over {SCAN_LIMIT:,} entries, too many to "
        "search for earlier runs' outputs, which a bot could read if there are any in it "
        "(keep run outputs out of engines' directories)"
        for name, plan in plans.items()
        if plan is not None
        for where in plan.unsearched
    ]


def _public(path: str) -> bool:
    """Inside the system directories or the arena's own code: readable by every bot."""
    return any(_inside(path, p) for p in (*SYSTEM_PATHS, *arena_paths()))


def own_dirs(argv: Sequence[str], cwd: str | None, *, own_dir_configured: bool) -> list[str]:
    """An engine's own directories: its configured ``cwd`` and those of its files.

    The files are the arguments that name existing files (the program, a script, a
    weights file), relative to ``cwd``; a program found on ``PATH`` counts too.
    Directories of the system and of the arena's code are left out (every bot sees them).
    """
    base = cwd or os.getcwd()
    found: set[str] = set()
    if cwd is not None and own_dir_configured:
        found.add(os.path.realpath(cwd))
    for i, arg in enumerate(argv):
        if i == 0 and "/" not in arg:
            program = shutil.which(arg)
            if program is not None:
                found.add(_manager_root(argv) or os.path.dirname(os.path.realpath(program)))
            continue
        if arg.startswith("-"):
            continue
        candidate = os.path.join(base, arg)
        if os.path.isfile(candidate):
            found.add(os.path.dirname(os.path.realpath(candidate)))
    return sorted(d for d in found if not _public(d))


def _manager_root(argv: Sequence[str]) -> str | None:
    """The root of the version manager whose shim the program is, found on ``PATH``
    (pyenv, asdf: ``~/.pyenv/shims/python3`` runs the manager, which needs its whole
    root directory), or None."""
    if not argv or "/" in argv[0]:
        return None
    program = shutil.which(argv[0])
    if program is None:
        return None
    where = os.path.dirname(os.path.realpath(program))
    return os.path.dirname(where) if os.path.basename(where) == "shims" else None


def _run_holding(path: str) -> str | None:
    """The run output directory (one holding a :data:`RUN_MARKERS` file) that is
    ``path`` or one of its parents, or None."""
    current = path
    while True:
        if not _public(current) and any(
            os.path.exists(os.path.join(current, m)) for m in RUN_MARKERS
        ):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def wrap_command(
    argv: Sequence[str], cwd: str | None, plan: SandboxPlan, *, memory_mb: int | None = None
) -> list[str]:
    """``argv`` run inside the sandbox described by ``plan``, starting in ``cwd``.

    ``memory_mb`` (the run's memory limit) caps the sandbox's in-memory filesystems,
    ``/tmp`` and ``/dev/shm``, each at that size; without it they are the kernel's
    default (half the RAM).

    The environment is not on this command line (the wrapper passes its own on, so
    what a bot is given stays out of ``/proc/*/cmdline``).
    """
    bwrap = _bwrap()
    if bwrap is None:
        raise RuntimeError("bubblewrap (bwrap) is not installed")
    args = [bwrap, *_base_args(network=plan.network, memory_mb=memory_mb)]
    system = _system_dirs()
    for path in plan.read_paths:
        if os.path.exists(path) and not any(_inside(path, s) for s in system):
            args += ["--ro-bind", path, path]
    for path in plan.write_paths:
        if os.path.exists(path):
            args += ["--bind", path, path]
    for path in plan.hidden:
        # Later mounts cover earlier ones: an empty read-only directory (a writable one
        # would be memory outside every limit), or /dev/null for a file.
        if os.path.isdir(path):
            args += ["--tmpfs", path, "--remount-ro", path]
        elif os.path.exists(path):
            args += ["--ro-bind", "/dev/null", path]
    args += list(plan.extra_args)
    # bwrap builds the root in memory: read-only once every mount point is made.
    args += ["--remount-ro", "/"]
    start = os.path.realpath(cwd or os.getcwd())
    visible = (*plan.read_paths, *plan.write_paths, *system)
    # The start directory exists inside when it is visible or holds a visible path
    # (bwrap creates the parents of its mount points); else the private /tmp.
    if not any(_inside(start, v) or _inside(v, start) for v in visible):
        start = "/tmp"
    return [*args, "--chdir", start, "--", *argv]


_subreaper = False
"""Whether :func:`guard_arbiter` made this process a child subreaper."""


def guard_arbiter() -> list[str]:
    """Make this process non-dumpable and a child subreaper; return what could not be done."""
    global _subreaper
    missing = []
    if not _prctl(_PR_SET_DUMPABLE, 0):
        missing.append("non-dumpable")
    if _prctl(_PR_SET_CHILD_SUBREAPER, 1):
        _subreaper = True
    else:
        missing.append("child subreaper")
    return missing


def proc_stats() -> Iterator[tuple[int, bytes, int, int]]:
    """``(pid, state, ppid, pgrp)`` of every process in Linux ``/proc``; empty without it."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # "pid (comm) state ppid pgrp ...": comm may contain spaces and parentheses.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2:
            yield int(entry), fields[0], int(fields[1]), int(fields[2])


def reap_escapees(known: Iterable[int]) -> int:
    """Kill and reap this process's children that are not in ``known``; return how many.

    With :func:`guard_arbiter` in force, the children the arbiter did not start itself
    are orphans of bots: processes that left their bot's process group (``setsid``) and
    outlived it.  Processes the arbiter started (``known``) are left alone; they are
    reaped by whoever waits for them.
    """
    if not _subreaper:
        return 0  # orphans go to init: none can be ours
    keep = set(known)
    me = os.getpid()
    count = 0
    for pid, _, parent, _ in list(proc_stats()):
        if parent != me or pid in keep:
            continue
        count += 1
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
        except OSError as exc:  # pragma: no cover - defensive
            if exc.errno != errno.EINTR:
                raise
    return count


class SandboxUnavailable(RuntimeError):
    """``sandbox: on`` was asked for where the sandbox cannot run; the message says why."""


UNSANDBOXED_WARNING: Final = (
    "warning: bots are not sandboxed ({why}): each bot runs as your user and can read "
    "your files and the output directory (the seed, hence every deck), see and write to "
    "the other bots' pipes, and start processes; run only bots you trust, or install "
    "bubblewrap"
)


def sandbox_enabled(mode: SandboxMode) -> tuple[bool, str | None]:
    """Whether bots run sandboxed under ``mode``, and the warning line to print if any.

    Raises :class:`SandboxUnavailable` for ``on`` where the sandbox cannot run.
    """
    if mode == "off":
        return False, None
    why = sandbox_unavailable()
    if why is None:
        return True, None
    if mode == "on":
        raise SandboxUnavailable(f"sandbox: on, but {why}")
    return False, UNSANDBOXED_WARNING.format(why=why)
