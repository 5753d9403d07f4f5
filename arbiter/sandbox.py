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
import pwd
import shutil
import signal
import stat
import struct
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

__all__ = [
    "BOT_USER_AUTO",
    "DEFAULT_PROCESSES",
    "LIVE_STATE",
    "LOADER_VARIABLES",
    "MINIMAL_ENV_KEYS",
    "RUN_MARKERS",
    "SCAN_LIMIT",
    "SYSTEM_PATHS",
    "USER_NAMESPACE_LIMITS",
    "WRAPPER_ENV",
    "BotUser",
    "BotUserError",
    "BotUserSpec",
    "SandboxConflict",
    "SandboxMode",
    "SandboxPlan",
    "SandboxUnavailable",
    "arena_paths",
    "check_own_dirs",
    "check_write_grants",
    "data_fd",
    "find_runs",
    "guard_arbiter",
    "linked_cwd",
    "linked_grant",
    "links_out",
    "minimal_env",
    "own_dirs",
    "own_namespace_unavailable",
    "plan_warnings",
    "proc_stats",
    "process_cap",
    "program_files",
    "public_own_dirs",
    "reap_escapees",
    "resolve_bot_user",
    "sandbox_enabled",
    "sandbox_unavailable",
    "seccomp_filter",
    "unreachable_for",
    "user_for_engine",
    "wrap_command",
    "wrap_parts",
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

LOADER_VARIABLES: Final = frozenset(
    {
        "GCONV_PATH",
        "GETCONF_DIR",
        "GLIBC_TUNABLES",
        "HOSTALIASES",
        "LD_AUDIT",
        "LD_DEBUG",
        "LD_DEBUG_OUTPUT",
        "LD_DYNAMIC_WEAK",
        "LD_HWCAP_MASK",
        "LD_LIBRARY_PATH",
        "LD_ORIGIN_PATH",
        "LD_PRELOAD",
        "LD_PROFILE",
        "LD_SHOW_AUXV",
        "LD_TRACE_LOADED_OBJECTS",
        "LD_USE_LOAD_BIAS",
        "LOCALDOMAIN",
        "LOCPATH",
        "MALLOC_TRACE",
        "NIS_PATH",
        "NLSPATH",
        "RESOLV_HOST_CONF",
        "RES_OPTIONS",
        "TMPDIR",
        "TZDIR",
    }
)
"""Variables that change what the C library loads or opens (glibc drops them for a
privileged program): never given to bwrap or setpriv, which run with privileges the
bot has not, only to the bot itself."""


SHELL_VARIABLES: Final = frozenset(
    {"ENV", "BASH_ENV", "SHELLOPTS", "BASHOPTS", "PS4", "IFS", "CDPATH", "GLOBIGNORE"}
)
"""Variables that make a shell run code or read its script otherwise (bash, where
``/bin/sh`` is bash, also imports ``BASH_FUNC_*`` functions): never given to the shell
that sets up a bot's own user namespace with that namespace's capabilities."""


def _after_switch(key: str) -> bool:
    """Whether ``key`` is set only once ``setpriv`` has dropped every privilege: the
    loader's variables, the locale's and time zone's (which can name files glibc parses),
    and the shell's (see :data:`SHELL_VARIABLES`)."""
    return (
        key in LOADER_VARIABLES
        or key in SHELL_VARIABLES
        or key in ("LANG", "LANGUAGE", "TZ")
        or key.startswith(("LC_", "BASH_FUNC_"))
    )


WRAPPER_ENV: Final = {"PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "LC_ALL": "C"}
"""The whole environment bwrap runs with; the bot's own comes through its arguments."""

BOT_HOME: Final = "/tmp"
"""``HOME`` inside the sandbox: the private, empty, writable /tmp."""


def _system_dirs() -> tuple[str, ...]:
    """The :data:`SYSTEM_PATHS` that are real directories here (a symlink such as a
    merged-/usr ``/bin`` resolves into one of them)."""
    return tuple(p for p in SYSTEM_PATHS if os.path.isdir(p) and not os.path.islink(p))


BOT_USER_AUTO: Final = "auto"
"""``bot_user`` default: run bots as ``nobody`` when the arena runs as root (sandboxed)."""

BotUserSpec = str | int
"""A ``bot_user`` setting: ``auto``, a user name, or a numeric uid."""


@dataclass(frozen=True)
class BotUser:
    """The user a bot process runs as, other than the arbiter's own."""

    name: str
    uid: int
    gid: int
    """Its primary group, the bot's only group (supplementary groups are dropped)."""

    def __str__(self) -> str:
        return f"{self.name} (uid {self.uid})"


class BotUserError(ValueError):
    """A ``bot_user`` that cannot be used here; the message says why and what to do."""


_MAX_UID: Final = 2**32 - 2
"""The largest uid: 2**32 - 1 is the kernel's "no change", larger ones wrap round to 0."""


def _lookup_user(spec: BotUserSpec) -> BotUser:
    if isinstance(spec, int) or (spec.isascii() and spec.isdigit()):
        uid = int(spec)
        if uid > _MAX_UID:
            raise BotUserError(f"bot_user: {spec} is not a user id (0 to {_MAX_UID:,})")
        try:
            entry = pwd.getpwuid(uid)
        except KeyError:  # a uid with no name: its group is the same number
            return BotUser(str(uid), uid, uid)
        return BotUser(entry.pw_name, uid, entry.pw_gid)
    try:
        entry = pwd.getpwnam(spec)
    except KeyError:
        raise BotUserError(f"bot_user: there is no user named {spec!r} on this machine") from None
    return BotUser(entry.pw_name, entry.pw_uid, entry.pw_gid)


@functools.cache
def _system_program(name: str) -> str | None:
    """A program from a system directory (``setpriv``, ``unshare``, ``prlimit``: they run
    inside the sandbox, where only the system directories are sure to be seen)."""
    found = shutil.which(name, path="/usr/bin:/bin:/usr/sbin:/sbin")
    return None if found is None else os.path.realpath(found)


def _setpriv() -> str | None:
    """util-linux's ``setpriv``."""
    return _system_program("setpriv")


DEFAULT_PROCESSES: Final = 256
"""The default of ``limits.processes``: processes and threads a sandboxed bot may run at
once, far above what a bot needs (a JVM on a large machine runs about a hundred
threads), far below what would take the machine."""


USER_NAMESPACE_LIMITS: Final = {
    **{
        f"max_{kind}_namespaces": 0
        for kind in ("user", "pid", "uts", "ipc", "net", "mnt", "cgroup", "time")
    },
    # Few: the machine's limit per user (128 instances by default) is shared by every
    # bot that runs at once as that user, and bots hardly watch files.
    "max_inotify_instances": 2,
    "max_inotify_watches": 1024,
    "max_fanotify_groups": 0,
    "max_fanotify_marks": 0,
}
"""What a bot may hold of the kernel's per-user counters (``/proc/sys/user``), set in its
own user namespace.  The kernel counts each of them per user for the whole machine too:
a bot that filled its user's namespace count kept the next sandbox from starting (its
opponent charged with the fault), and one holding every inotify instance of its user
broke the file watching of whatever else runs as that user."""


@functools.cache
def own_namespace_unavailable(user: BotUser | None) -> str | None:
    """Why a sandboxed bot run as ``user`` (None: the arbiter's own) cannot be given a
    user namespace of its own here, or None when it can (the answer is cached).

    The namespace is where the bot's share of the kernel's per-user counters is bounded:
    ``RLIMIT_NPROC`` (``limits.processes``) and the :data:`USER_NAMESPACE_LIMITS`, which
    the kernel counts per user *and user namespace*.  The bot's user creates it (after
    ``setpriv``, for an arbiter run as root), so bots run as one user are counted apart
    and none can reach another's count.  Root is never counted.
    """
    if user is None and os.geteuid() == 0:
        return "the bots run as root, whom the kernel does not count"
    try:
        probe = [*_own_namespace(64), _system_program("true") or "/bin/true"]
    except RuntimeError as exc:
        return str(exc)
    if user is not None:
        probe = [_setpriv() or "setpriv", *_switch_args(user), "--", *probe]
    failed = _probe_failure(probe)
    if failed is None:
        return None
    who = "the arena's user" if user is None else str(user)
    return f"{who} cannot create a user namespace here ({failed})"


def _probe_failure(argv: list[str]) -> str | None:
    """Run ``argv`` to see whether the machine allows it: None if it exits with 0, else
    the last line it wrote to stderr (or its exit status, or why it could not run)."""
    try:
        done = subprocess.run(argv, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{os.path.basename(argv[0])} could not be run: {exc}"
    if done.returncode == 0:
        return None
    said = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return said[-1] if said else f"exit status {done.returncode}"


def _switch_args(user: BotUser) -> list[str]:
    """setpriv's options that turn root into ``user``: its uid and primary group only,
    no capability left (nor any to get back through exec)."""
    switch = [f"--reuid={user.uid}", f"--regid={user.gid}", "--clear-groups"]
    return [*switch, "--inh-caps=-all", "--bounding-set=-all"]


def _own_namespace(processes: int | None) -> list[str]:
    """The command prefix that puts a bot in a user namespace of its own, with the
    :data:`USER_NAMESPACE_LIMITS` and, with ``processes``, a cap on its processes and
    threads (hard limits too: the bot cannot raise them).  See
    :func:`own_namespace_unavailable`."""
    programs = {p: _system_program(p) for p in ("unshare", "sh", "setpriv", "prlimit")}
    missing = [p for p, path in programs.items() if path is None]
    if missing:
        raise RuntimeError(f"{', '.join(missing)} not installed (util-linux, a shell)")
    writes = "".join(
        f"if [ -e /proc/sys/user/{name} ]; then echo {value} > /proc/sys/user/{name}; fi\n"
        for name, value in USER_NAMESPACE_LIMITS.items()
    )
    # The bot's user creates the namespace while its own count is unbounded (the kernel
    # takes the creator's limit as the bound of the whole namespace); --map-current-user
    # keeps its uid and gid as they are, --keep-caps lets sh set the namespace's limits,
    # and setpriv then drops every capability before the bot runs.
    drop = [programs["setpriv"], "--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all"]
    rlimits = [programs["prlimit"], "--msgqueue=0:0", "--sigpending=1024:1024"]
    if processes is not None:
        rlimits.append(f"--nproc={processes}:{processes}")
    return [
        *(str(programs["unshare"]), "--user", "--map-current-user", "--keep-caps"),
        *(str(programs["sh"]), "-c", "set -e\n" + writes + 'exec "$@"', "sh"),
        *(str(a) for a in drop),
        "--",
        *(str(a) for a in rlimits),
        "--",
    ]


def process_cap(
    processes: int | None, user: BotUser | None, *, sandboxed: bool
) -> tuple[bool, int | None, str | None]:
    """For a bot run as ``user``: whether it gets a user namespace of its own
    (:func:`own_namespace_unavailable`), its cap on processes under ``limits.processes``
    (``processes``), and a warning when the namespace cannot be given.  Only sandboxed
    bots get one: without it, a bot's count would include every process of its user,
    the arbiter's own among them."""
    if not sandboxed:
        return False, None, None
    why = own_namespace_unavailable(user)
    if why is None:
        return True, processes, None
    capped = "" if processes is None else f"limits.processes ({processes}) is not applied and "
    return (
        False,
        None,
        (
            f"warning: bots get no user namespace of their own: {why}; {capped}a bot can start "
            "processes without bound and use up its user's kernel counters (namespaces, inotify), "
            "which other programs of that user share"
        ),
    )


def resolve_bot_user(spec: BotUserSpec, *, sandboxed: bool) -> tuple[BotUser | None, str | None]:
    """The user bots run as under ``spec`` (None: the arbiter's own), and a warning.

    ``auto`` is ``nobody`` when the arbiter runs as root and bots are sandboxed (the
    sandbox shows a bot only what it may read, wherever it lies), else the arbiter's
    user; the warning says why ``auto`` kept root.  A user named explicitly is used
    sandboxed or not; :class:`BotUserError` when that cannot be done (no such user, an
    arbiter not run as root, no ``setpriv`` for the sandbox to switch with).
    """
    euid = os.geteuid()
    auto = spec == BOT_USER_AUTO
    if auto and (euid != 0 or not sandboxed):
        return None, None
    try:
        user = _lookup_user("nobody" if auto else spec)
    except BotUserError:
        if not auto:
            raise
        return None, (
            "warning: bots run as root: there is no user 'nobody' to run them as; set "
            "bot_user to an unprivileged user (or to root, to keep root without this warning)"
        )
    if user.uid == euid:
        if auto:  # a 'nobody' that is root (uid 0): nothing to switch to
            return None, "warning: bots run as root: the user 'nobody' here has uid 0"
        return None, None
    if user.uid < 0:
        raise BotUserError(f"bot_user: {spec} is not a user id (0 to {_MAX_UID:,})")
    if user.gid == 0:
        why = f"{user}'s group is root's (gid 0), which would let bots read root's group files"
        if not auto:
            raise BotUserError(f"bot_user: {why}; choose a user of another group")
        return None, f"warning: bots run as root: {why}"
    if euid != 0:
        raise BotUserError(
            f"bot_user: {user} needs the arena to run as root to switch to it (it runs as "
            f"uid {euid}); leave bot_user unset"
        )
    if sandboxed and _setpriv() is None:
        why = "setpriv (util-linux), which the sandbox switches users with, is not installed"
        if not auto:
            raise BotUserError(f"bot_user: cannot run bots as {user}: {why}")
        return None, f"warning: bots run as root, not as {user}: {why}"
    return user, None


def user_for_engine(
    name: str, spec: BotUserSpec, user: BotUser | None, plan: SandboxPlan | None
) -> BotUser | None:
    """The user engine ``name`` runs as: ``user`` (from :func:`resolve_bot_user` of
    ``spec``), which must be able to use what ``plan`` binds (:func:`unreachable_for`),
    else :class:`BotUserError`.  There is no falling back to root: the bot's author
    would choose it, by what the bot's directory lets the user read."""
    if user is None or plan is None:
        return user
    blocked = unreachable_for(user, plan)
    if blocked is None:
        return user
    why = "bot_user" if spec != BOT_USER_AUTO else "the arena runs as root"
    raise BotUserError(
        f"engine {name!r} runs as {user} ({why}): {blocked}; or set bot_user: root to run "
        "bots as root"
    )


def _allows(st: os.stat_result, user: BotUser, bits: int) -> bool:
    """Whether the permission bits of ``st`` give ``user`` (with only its primary group)
    all of ``bits`` (0o4 read, 0o2 write, 0o1 search), access control lists aside."""
    if st.st_uid == user.uid:
        mode = st.st_mode >> 6
    elif st.st_gid == user.gid:
        mode = st.st_mode >> 3
    else:
        mode = st.st_mode
    return mode & bits == bits


def _untraversable(path: str, user: BotUser) -> str | None:
    """The first directory on the way to ``path`` (itself included) that ``user`` may
    not search, or None."""
    current = "/"
    for part in [p for p in path.split("/") if p]:
        try:
            if not _allows(os.stat(current), user, 0o1):
                return current
        except OSError:
            return current
        current = os.path.join(current, part)
    try:
        return None if _allows(os.stat(current), user, 0o5) else current
    except OSError:
        return current


def _owner(st: os.stat_result) -> str:
    try:
        return pwd.getpwuid(st.st_uid).pw_name
    except KeyError:
        return str(st.st_uid)


def unreachable_for(user: BotUser, plan: SandboxPlan) -> str | None:
    """What of ``plan`` ``user`` may not use, as a phrase naming the path and the fix,
    or None when it may use all of it.

    Inside the sandbox only the directories bound into it count (the directories above
    them are the sandbox's own), so a bot kept under a private home directory still
    runs: its own directories and grants must be readable, its ``write_paths``
    writable.  Files inside them are not checked (a bot that cannot open one of its
    files says so when it starts).
    """
    for path in plan.linked:
        # The sandbox is built as root: bound, such a directory would be shown even
        # behind a directory the user may not enter; reached through a link of the
        # bot's, it is shown only if the user could reach it anyway.
        blocked = _untraversable(path, user)
        if blocked is not None:
            return (
                f"{path}, reached through a symbolic link on the way its command names it, "
                f"lies behind {blocked}, which {user} may not enter: name it by its real path"
            )
    system = _system_dirs()
    wants = [(p, False) for p in plan.read_paths if not any(_inside(p, s) for s in system)]
    wants += [(p, True) for p in plan.write_paths]
    for path, write in wants:
        try:
            st = os.stat(path)
        except OSError:
            continue  # missing paths are not bound (wrap_command skips them)
        is_dir = stat.S_ISDIR(st.st_mode)
        need = (0o6 if write else 0o4) | (0o1 if is_dir else 0)
        if _allows(st, user, need):
            continue
        mode = f"{stat.filemode(st.st_mode)}, owned by {_owner(st)}"
        if write:
            return (
                f"{path} (write_paths) is not writable by {user} ({mode}): give it to that "
                f"user (chown {user.uid} {path})"
            )
        return (
            f"{path} is not readable by {user} ({mode}): make it readable "
            f"(chmod o+r{'x' if is_dir else ''} {path})"
        )
    return None


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
    failed = _probe_failure([bwrap, *_base_args(network=False), "--", "/bin/true"])
    if failed is None:
        return None
    return (
        f"bwrap cannot create namespaces here ({failed}); unprivileged user "
        "namespaces may be disabled (sysctl kernel.unprivileged_userns_clone)"
    )


def _bind_args(flag: str, path: str) -> list[str]:
    """Arguments that make ``path`` appear at the same place, symlinks reproduced."""
    if os.path.islink(path) and os.path.dirname(path) == "/":
        # Merged /usr: /bin -> usr/bin.  Binding it would duplicate /usr/bin at /bin
        # but break programs that compare paths; a symlink is what the host has.
        return ["--symlink", os.readlink(path), path]
    return [flag, path, path]


def _base_args(
    *, network: bool, memory_mb: int | None = None, user: BotUser | None = None
) -> list[str]:
    if user is None:
        args = ["--unshare-all", "--die-with-parent"]
        if network:
            args.append("--share-net")
        if os.geteuid() == 0:
            # A privileged bwrap keeps every capability unless told otherwise.
            args += ["--cap-drop", "ALL"]
    else:
        # bwrap runs as root and builds the sandbox with root's access to the files
        # it binds (a bot kept under a private home directory, a Python under
        # /root/.pyenv); setpriv (see wrap_command) then turns the bot into ``user``.
        # No user namespace: in one, root could only map to itself.  The three
        # capabilities left are the ones setpriv needs, and changing to a non-root uid
        # clears them all.
        args = ["--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try"]
        if not network:
            args.append("--unshare-net")
        args += ["--die-with-parent", "--cap-drop", "ALL"]
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP"]
    for path in SYSTEM_PATHS:
        if os.path.lexists(path):
            args += _bind_args("--ro-bind", path)
    # bwrap run as root creates the parents of mount points private to root (0700): a
    # bot run as another user could read none of the files bound into /etc.
    args += ["--perms", "0755", "--dir", "/etc"]
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
    # But for the per-user-namespace limits: their files can be written only with
    # CAP_SYS_RESOURCE in the namespace they belong to, the opener's, so only the step
    # that sets up the bot's own namespace can (a bot without one reads them only).
    args += ["--bind", "/proc/sys/user", "/proc/sys/user"]
    args += ["--dev", "/dev", "--remount-ro", "/dev"]
    # Sticky and writable by all, as on the host: a bot run as another user than root
    # writes its files there too.
    perms = ["--perms", "1777"]
    args += [*perms, *size, "--tmpfs", "/dev/shm", *perms, *size, "--tmpfs", "/tmp"]
    return args


@functools.cache
def arena_paths() -> tuple[str, ...]:
    """Directories every bot may read: the Python runtime and the arena's packages.

    The bundled engines (and SDK bots) import ``protocol``, ``engines`` and
    ``arbiter.rules``; these are public code.  With an editable install they live in
    the source tree, which may also hold output directories: only the package
    directories themselves are granted.
    """
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    paths.add(os.path.dirname(os.path.realpath(sys.executable)))
    paths.update(_arena_packages())
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
    unfollowed: tuple[tuple[str, str], ...] = ()
    """Arguments that are symbolic links out of the engine's directory, and their
    targets, which the sandbox does not show (:func:`links_out`)."""
    linked: tuple[str, ...] = ()
    """Own directories reached through a directory link on the way the command names
    them: shown only if the bot's user could reach them on the host."""
    public: tuple[str, ...] = ()
    """The engine's configured ``cwd`` or directories of its files that lie in a system
    directory or the arena's installation, which every bot is shown
    (:func:`public_own_dirs`)."""

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
        found, unfollowed, linked = _own_dirs(argv, cwd, own_dir_configured=own_dir_configured)
        own = set(found)
        granted = {os.path.realpath(p) for p in allow_paths}
        reads = set(arena_paths()) | own | granted
        writes = {os.path.realpath(p) for p in write_paths}
        # A grant inside another is writable through it already; bound apart, it would be
        # looked up again at each start, where the bot may have made a link of its path.
        writes = {w for w in writes if not any(w != o and _inside(w, o) for o in writes)}
        visible = own | granted | writes
        _refuse_live_state(granted | writes)
        _refuse_homes(own | granted | writes)
        _refuse_inside_runs(visible, writes)
        # A version manager's root holds interpreters, not the bot's files: not searched.
        searched = {d for d in visible if os.path.isdir(d)} - {_manager_root(argv)}
        runs, unsearched = find_runs(sorted(searched))
        mine = {os.path.realpath(p) for p in secret}
        secrets = mine | set(runs)
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
        _refuse_guarded_in_grants(writes, masks, mine)
        # Shown read-only inside a directory shown writable: that bind shows them already,
        # and bound on their own they would be looked up again at each start, where the
        # bot may have swapped them for links.
        reads = {r for r in reads if not any(_inside(r, w) for w in writes)}
        return cls(
            read_paths=tuple(sorted(reads)),
            write_paths=tuple(sorted(writes)),
            hidden=tuple(sorted(masks)),
            network=network,
            unsearched=tuple(unsearched),
            unfollowed=tuple(unfollowed),
            linked=tuple(linked),
            public=tuple(public_own_dirs(argv, cwd, own_dir_configured=own_dir_configured)),
        )

    def dir_holding(self, path: str) -> str | None:
        """The directory this engine may read that holds ``path``, system directories
        included, or None.

        ``path`` itself may be masked from the engine; the bots of another run,
        started before ``path`` existed, would see it there.
        """
        real = os.path.realpath(path)
        for visible in (*self.read_paths, *self.write_paths, *_system_dirs()):
            if _inside(real, visible):
                return visible
        return None


def program_files(argv: Sequence[str], cwd: str | None) -> frozenset[str]:
    """What an engine's command line runs: the files and directories it names (its
    program, script, package, data), resolved, and the module or code of an
    interpreter's ``-m``/``-c``.  Two engines with the same are one program in two
    configurations (their options aside)."""
    base = cwd or os.getcwd()
    found = set()
    for i, arg in enumerate(argv):
        if i == 0 and "/" not in arg:
            arg = shutil.which(arg) or arg
        if i > 0 and argv[i - 1] in ("-m", "-c"):
            found.add(f"{argv[i - 1]} {arg}")
        elif arg[:2] in ("-m", "-c") and len(arg) > 2:
            found.add(f"{arg[:2]} {arg[2:]}")
        elif not arg.startswith("-") and os.path.exists(os.path.join(base, arg)):
            found.add(os.path.realpath(os.path.join(base, arg)))
    return frozenset(found)


def check_own_dirs(
    owns: Mapping[str, Sequence[str]], programs: Mapping[str, frozenset[str]]
) -> None:
    """Raise :class:`SandboxConflict` when an engine's own directory is, or lies inside,
    another engine's own directory (``owns``: :func:`own_dirs` by engine name).

    That other directory could not be hidden from it (hiding it would hide the engine),
    so the engine would be shown the other's files: two bots kept in one directory, or a
    directory link shipped in a bot's directory and named on its command line.  One
    program in two configurations (the same :func:`program_files` and directories) is
    fine.
    """
    for name, dirs in owns.items():
        for other, theirs in owns.items():
            if other == name:
                continue
            if set(dirs) == set(theirs) and programs.get(name) == programs.get(other):
                continue
            for mine in dirs:
                for held in theirs:
                    if _inside(mine, held):
                        raise SandboxConflict(
                            f"engine {name!r} would be shown {mine}, which is or lies in "
                            f"{held}, engine {other!r}'s directory, which then could not be "
                            "hidden from it: keep each engine in a directory of its own, and "
                            "name its files by their real paths (not through a link in a "
                            "bot's directory)"
                        )


def check_write_grants(
    shown: Mapping[str, Iterable[str]], writable: Mapping[str, Iterable[str]]
) -> None:
    """Raise :class:`SandboxConflict` when a directory one engine may write is or holds a
    directory another engine is shown (``shown``: its own directories and grants, by
    engine name; ``writable``: its ``write_paths``).

    The writer could change the other's program, read the notes it keeps there, or
    swap a directory of the other's for a link, which the other's next sandbox would
    follow (its paths are looked up at each start).
    """
    for writer, grants in writable.items():
        for w in sorted(os.path.realpath(g) for g in grants):
            for other, paths in shown.items():
                if other == writer:
                    continue
                for path in sorted(os.path.realpath(p) for p in paths):
                    if _inside(path, w):
                        raise SandboxConflict(
                            f"engine {writer!r} may write {w} (write_paths), which holds "
                            f"{path}, shown to engine {other!r}: it could change what "
                            f"{other!r} runs or sees; give each engine write_paths of its own, "
                            "apart from the other engines' directories"
                        )


LIVE_STATE: Final = ("/proc", "/sys", "/dev", "/run")
"""The kernel's and the running system's state: never granted to a bot (the host's
``/proc`` shows every process, its opponent's memory included; ``/dev/shm`` and
``/run`` hold files that outlive the run and sockets of the host's services)."""


def _refuse_live_state(grants: set[str]) -> None:
    """Refuse a grant (resolved) that is the whole file system or lies in :data:`LIVE_STATE`."""
    for grant in sorted(grants):
        state = next((s for s in LIVE_STATE if _inside(grant, s)), None)
        if grant == "/" or state is not None:
            what = "the whole file system" if state is None else f"in {state}"
            raise SandboxConflict(
                f"the grant {grant} is {what}: a bot may be granted directories of files, "
                f"never the running system's state ({', '.join(LIVE_STATE)}: other "
                "processes' memory, shared memory that outlives the run, the host's sockets)"
            )


def _homes() -> set[str]:
    """The arena user's home directory, as ``HOME`` and the password file say."""
    homes = {os.path.expanduser("~")}
    try:
        homes.add(pwd.getpwuid(os.geteuid()).pw_dir)
    except KeyError:
        pass
    return {os.path.realpath(h) for h in homes if h and h != "~"}


def _refuse_homes(shown: set[str]) -> None:
    """Refuse to show a bot a directory that is or holds the arena user's home (a bot
    kept directly in ``~`` would be shown all of it: keys, history, mail) or ``/``."""
    homes = sorted(_homes())
    for path in sorted(shown):
        home = next((h for h in homes if _inside(h, path)), None)
        if path == "/":
            what = "is the whole file system"
        elif home is None:
            continue
        else:
            what = "is your home directory" if path == home else f"holds your home ({home})"
        raise SandboxConflict(
            f"{path} {what}, and a bot is shown its directory whole (keys, history, "
            "everything in it): keep each bot in a directory of its own "
            "(mkdir ~/bots/NAME)"
        )


def linked_grant(path: str, roots: Iterable[str]) -> tuple[str, str] | None:
    """The first symbolic link on ``path`` (absolute) that lies inside one of ``roots``
    (resolved directories: the config's, the engines' own), and its target; None if
    there is none.  A link there may be a bot's, which would choose what it is granted
    (``data -> /proc``); links elsewhere (the operator's) are followed.  ``..`` is
    taken as written (``a/b/../c`` is ``a/c``)."""
    current = "/"
    for part in os.path.normpath(path).split("/"):
        if not part:
            continue
        step = os.path.join(current, part)
        if os.path.islink(step):
            if any(_inside(step, root) for root in roots):
                return step, os.path.realpath(step)
            step = os.path.realpath(step)
        current = step
    return None


def _refuse_inside_runs(visible: set[str], writes: set[str]) -> None:
    """Raise :class:`SandboxConflict` for a visible path that is or lies in a run's
    output.  Another run with the same seed deals the same decks: its journal or
    resolved config where the bot may read would tell it every card (runs *inside* a
    visible directory are masked instead)."""
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


def _refuse_guarded_in_grants(writes: set[str], masks: list[str], mine: set[str]) -> None:
    """Raise :class:`SandboxConflict` for a write grant that holds a masked path (``mine``:
    this run's output), the arena's code or a system directory.  There a bot could
    rename what holds a masked path (the mask, placed by path at each start, would then
    miss it) or change code others run."""
    hidden_what = (
        "a path hidden from it (another engine's directory, the config file or an "
        "earlier run's output)"
    )
    guarded = [
        (m, "this run's output, which the bot could have prepared" if m in mine else hidden_what)
        for m in masks
    ]
    guarded += [(a, "the arena's own code, which every bot runs") for a in arena_paths()]
    guarded += [(d, "a system directory") for d in _system_dirs()]
    for w in sorted(writes):
        for path, what in guarded:
            if _inside(path, w):
                fix = (
                    "choose an --out outside it"
                    if path in mine
                    else "grant a directory that holds none of these"
                )
                raise SandboxConflict(
                    f"{w}, which the engine may write (write_paths), holds {path}, "
                    f"{what}: a bot could move or change it there; {fix}"
                )


def plan_warnings(plans: Mapping[str, SandboxPlan | None]) -> list[str]:
    """The warnings an engine's sandbox gives, by engine name: a directory too large to
    be searched whole for earlier runs' outputs (which the sandbox could then not hide),
    each argument whose symbolic link out of the engine's directory is not followed, and
    each of the engine's directories that every bot is shown (:attr:`SandboxPlan.public`)."""
    lines = []
    for name, plan in plans.items():
        if plan is None:
            continue
        lines += [
            f"warning: engine {name!r}: {where} holds over {SCAN_LIMIT:,} entries, too many "
            "to search for earlier runs' outputs, which a bot could read if there are any in "
            "it (keep run outputs out of engines' directories)"
            for where in plan.unsearched
        ]
        lines += [
            f"warning: engine {name!r}: {arg} is a symbolic link out of the engine's "
            f"directory, to {target}, which the sandbox does not show (links in a bot's "
            "directory are the bot's to choose); name the target itself in the command, or "
            "grant it with allow_paths"
            for arg, target in plan.unfollowed
        ]
        lines += [
            f"warning: engine {name!r}: {where} lies where every bot is shown (a system "
            "directory or the arena's installation): its files cannot be hidden from the "
            "other engines; keep a bot's files out of /opt, /usr and the virtual environment"
            for where in plan.public
        ]
    return lines


def public_own_dirs(argv: Sequence[str], cwd: str | None, *, own_dir_configured: bool) -> list[str]:
    """The engine's configured ``cwd`` and the directories of the files its command names
    after the program (a script, a weights file) that lie where every bot is shown: a
    system directory (``/opt``, ``/usr/local``) or the arena's installation (its virtual
    environment).  Nothing there can be hidden from the other engines.  The arena's own
    packages are left out: the bundled engines (and the example bots kept beside them)
    are public code by design; so is the program itself (an interpreter)."""
    base = os.path.abspath(cwd or os.getcwd())
    found = set()
    if cwd is not None and own_dir_configured:
        found.add(os.path.realpath(base))
    for arg in argv[1:]:
        candidate = os.path.join(base, arg)
        if not arg.startswith("-") and os.path.isfile(candidate):
            found.add(os.path.dirname(os.path.realpath(candidate)))
    packages = _arena_packages()
    return sorted(d for d in found if _public(d) and not any(_inside(d, pkg) for pkg in packages))


@functools.cache
def _arena_packages() -> tuple[str, ...]:
    """The directories of the arena's own packages (``arbiter``, ``engines``, ``protocol``)."""
    import arbiter
    import engines
    import protocol

    return tuple(
        os.path.realpath(location)
        for module in (arbiter, engines, protocol)
        for location in module.__path__
    )


def _public(path: str) -> bool:
    """Inside the system directories or the arena's own code: readable by every bot."""
    return any(_inside(path, p) for p in (*SYSTEM_PATHS, *arena_paths()))


def own_dirs(argv: Sequence[str], cwd: str | None, *, own_dir_configured: bool) -> list[str]:
    """An engine's own directories: its configured ``cwd`` and those of its files.

    The files are the arguments that name existing files (the program, a script, a
    weights file), relative to ``cwd``; a program found on ``PATH`` counts too.
    Directories of the system and of the arena's code are left out (every bot sees them),
    and so are the targets of symbolic links out of the engine's directory
    (:func:`links_out`).
    """
    return _own_dirs(argv, cwd, own_dir_configured=own_dir_configured)[0]


def links_out(argv: Sequence[str], cwd: str | None) -> list[tuple[str, str]]:
    """``(argument, target)`` for each argument naming a file through a symbolic link
    below the engine's directory (``cwd``, else the current one), or naming a file that
    is itself a link out of its directory: not followed.  Such links are the bot's, and
    a link followed would let the bot choose which directory it is shown (another
    engine's, or one behind a directory its user may not enter, which the sandbox,
    built as root, would bind all the same).  Links into the system's and the arena's
    own directories are followed (an interpreter in a virtual environment)."""
    return _own_dirs(argv, cwd, own_dir_configured=False)[1]


def _below(path: str, base: str) -> str | None:
    """``path`` relative to ``base`` when it lies below it, else None."""
    return os.path.relpath(path, base) if path != base and _inside(path, base) else None


def _own_dirs(
    argv: Sequence[str], cwd: str | None, *, own_dir_configured: bool
) -> tuple[list[str], list[tuple[str, str]], list[str]]:
    """:func:`own_dirs`, :func:`links_out`, and the own directories reached through a
    directory link on the way the command names them."""
    base = os.path.abspath(cwd or os.getcwd())
    real_base = os.path.realpath(base)
    found: set[str] = set()
    linked: set[str] = set()
    unfollowed: list[tuple[str, str]] = []
    if cwd is not None and own_dir_configured:
        found.add(real_base)
        if real_base != os.path.normpath(base):  # a link on the way (the bot's, maybe)
            linked.add(real_base)
    for i, arg in enumerate(argv):
        if i == 0 and "/" not in arg:
            program = shutil.which(arg)
            if program is not None:
                found.add(_manager_root(argv) or os.path.dirname(os.path.realpath(program)))
            continue
        if arg.startswith("-"):
            continue
        candidate = os.path.normpath(os.path.join(base, arg))
        if not os.path.isfile(candidate):
            continue
        real = os.path.realpath(candidate)
        below = _below(candidate, base) or _below(candidate, real_base)
        # A link below the engine's directory, or a file that is a link out of its own
        # directory (wherever it is named from: "python3 /bots/bob/bot.py /bots/bob/book"
        # names bob's link by an absolute path), is the bot's choice, not the operator's.
        link = os.path.dirname(real) != os.path.realpath(os.path.dirname(candidate))
        if below is not None and real != os.path.join(real_base, below):
            link = True
        if link and not _public(real):
            unfollowed.append((arg, real))
            continue
        found.add(os.path.dirname(real))
        if os.path.dirname(real) != os.path.dirname(candidate):
            linked.add(os.path.dirname(real))
    return (
        sorted(d for d in found if not _public(d)),
        unfollowed,
        sorted(d for d in linked if not _public(d)),
    )


def linked_cwd(cwd: str, config_dir: str) -> str | None:
    """Where ``cwd``, relative to ``config_dir``, leads when a symbolic link below the
    config's directory takes it elsewhere (a bot's file could be that link), else None."""
    if os.path.isabs(cwd):
        return None
    real_dir = os.path.realpath(config_dir)
    lexical = os.path.normpath(os.path.join(real_dir, cwd))
    if not _below(lexical, real_dir):
        return None
    real = os.path.realpath(lexical)
    return real if real != lexical else None


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
    argv: Sequence[str],
    cwd: str | None,
    plan: SandboxPlan,
    *,
    memory_mb: int | None = None,
    user: BotUser | None = None,
    seccomp_fd: int | None = None,
    env: Mapping[str, str] | None = None,
    own_namespace: bool = False,
    processes: int | None = None,
) -> list[str]:
    """``argv`` run inside the sandbox described by ``plan``, starting in ``cwd``: the
    command line of :func:`wrap_parts`, options and command joined by ``--``."""
    options, command = wrap_parts(
        argv,
        cwd,
        plan,
        memory_mb=memory_mb,
        user=user,
        seccomp_fd=seccomp_fd,
        env=env,
        own_namespace=own_namespace,
        processes=processes,
    )
    return [*options, "--", *command]


def wrap_parts(
    argv: Sequence[str],
    cwd: str | None,
    plan: SandboxPlan,
    *,
    memory_mb: int | None = None,
    user: BotUser | None = None,
    seccomp_fd: int | None = None,
    env: Mapping[str, str] | None = None,
    own_namespace: bool = False,
    processes: int | None = None,
) -> tuple[list[str], list[str]]:
    """bwrap and its options, and the command it runs, for ``argv`` inside the sandbox
    described by ``plan``, starting in ``cwd``.

    ``memory_mb`` (the run's memory limit) caps the sandbox's in-memory filesystems,
    ``/tmp`` and ``/dev/shm``, each at that size; without it they are the kernel's
    default (half the RAM).  With ``user`` (the arbiter must be root), the bot runs as
    that user, with its primary group only and no capabilities.  ``seccomp_fd`` is a
    descriptor the child inherits, to read :func:`seccomp_filter` from (see
    :func:`data_fd`).  With ``env``, the bot's environment is exactly ``env``, given
    through bwrap's arguments (``--clearenv``, ``--setenv``), so bwrap itself can run
    with :data:`WRAPPER_ENV`; pass the options through ``--args`` (:func:`data_fd`) to
    keep the values off command lines.  Of ``env``, the :data:`LOADER_VARIABLES` (and
    the locale's and time zone's) reach only the bot: with ``user``, ``env`` sets them
    after ``setpriv`` has dropped root; a program whose path holds ``=`` cannot then be
    run (``env`` would read it as a variable): :class:`SandboxConflict`.
    Without ``env`` the bot gets bwrap's own environment.  ``own_namespace`` puts the
    bot in a user namespace of its own, where ``processes`` caps the processes and
    threads it runs at once (:func:`process_cap` says whether that can be done here).
    """
    if processes is not None and not own_namespace:
        raise ValueError("a cap on processes needs the bot's own user namespace")
    bwrap = _bwrap()
    if bwrap is None:
        raise RuntimeError("bubblewrap (bwrap) is not installed")
    args = [bwrap, *_base_args(network=plan.network, memory_mb=memory_mb, user=user)]
    system = _system_dirs()
    reads = [p for p in plan.read_paths if not any(_inside(p, s) for s in system)]
    binds = [p for p in (*reads, *plan.write_paths) if os.path.exists(p)]
    # bwrap makes the directories above a mount point private to root (0700): a bot run
    # as another user could not reach what is bound below them.
    for parent in sorted({a for p in binds for a in _ancestors(p)}):
        args += ["--perms", "0755", "--dir", parent]
    for path in plan.read_paths:
        if path in binds:
            args += ["--ro-bind", path, path]
    for path in plan.write_paths:
        if path in binds:
            args += ["--bind", path, path]
    for path in plan.hidden:
        # Later mounts cover earlier ones: an empty read-only directory (a writable one
        # would be memory outside every limit), or /dev/null for a file.
        if os.path.isdir(path):
            args += ["--tmpfs", path, "--remount-ro", path]
        elif os.path.exists(path):
            args += ["--ro-bind", "/dev/null", path]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    args += list(plan.extra_args)
    # bwrap builds the root in memory: read-only once every mount point is made.
    args += ["--remount-ro", "/"]
    start = os.path.realpath(cwd or os.getcwd())
    visible = (*plan.read_paths, *plan.write_paths, *system)
    # The start directory exists inside when it is visible or holds a visible path
    # (bwrap creates the parents of its mount points); else the private /tmp.
    if not any(_inside(start, v) or _inside(v, start) for v in visible):
        start = "/tmp"
    # Loader variables (LD_PRELOAD would run the bot's code in every program of the
    # chain) are set last, once root and the namespace's capabilities are gone.
    privileged = user is not None or own_namespace
    late: list[str] = []
    if env is not None:
        args.append("--clearenv")
        for key, value in env.items():
            if privileged and _after_switch(key):
                late.append(f"{key}={value}")
            else:
                args += ["--setenv", key, value]
    if late:
        if "=" in argv[0]:
            raise SandboxConflict(
                f"the program {argv[0]} has '=' in its path, which env (run to set "
                f"{', '.join(v.partition('=')[0] for v in late)} once the bot's user is "
                "switched) would read as a variable: rename it or link to it"
            )
        argv = [_env_program(), *late, *argv]
    if own_namespace:
        argv = [*_own_namespace(processes), *argv]
    if user is not None:
        setpriv = _setpriv()
        if setpriv is None:
            raise RuntimeError("setpriv (util-linux) is not installed")
        argv = [setpriv, *_switch_args(user), "--", *argv]
    return [*args, "--chdir", start], list(argv)


def _env_program() -> str:
    found = shutil.which("env", path="/usr/bin:/bin")
    if found is None:
        raise RuntimeError("env (coreutils) is not installed")
    return found


# A seccomp filter (classic BPF over ``struct seccomp_data``: ``nr`` at offset 0, ``arch``
# at 4) that fails a few system calls with EPERM:
# - the kernel keyring's three, as Docker's default profile does.  Keyrings are not
#   namespaced like files or processes: all the bots that run as one user share that
#   user's keyring, and a key outlives the process that added it, so one bot could leave
#   the cards it was dealt there for the process that plays the same deals from the
#   other seat;
# - setsid.  The kernel schedules the processes of one session as one group (autogroup):
#   a bot whose busy children each started a session of their own took a full share of
#   the cores per child, and its opponent, thinking on its own clock, timed out.  Kept
#   in the session the arbiter gave it, a bot gets one share however many processes it
#   runs.
_AUDIT_ARCH_X86_64: Final = 0xC000003E
_AUDIT_ARCH_I386: Final = 0x40000003
_AUDIT_ARCH_AARCH64: Final = 0xC00000B7
_X32: Final = 0x40000000
_DENIED_CALLS: Final = {
    # add_key, request_key, keyctl, setsid; x86-64 also in its x32 numbering
    _AUDIT_ARCH_X86_64: (248, 249, 250, 112, _X32 | 248, _X32 | 249, _X32 | 250, _X32 | 112),
    _AUDIT_ARCH_I386: (286, 287, 288, 66),
    _AUDIT_ARCH_AARCH64: (217, 218, 219, 157),
}
_BPF_LD_W_ABS: Final = 0x20
_BPF_JEQ_K: Final = 0x15
_BPF_RET_K: Final = 0x06
_SECCOMP_RET_ALLOW: Final = 0x7FFF0000
_SECCOMP_RET_ERRNO: Final = 0x00050000


@functools.cache
def seccomp_filter() -> bytes:
    """The seccomp program bwrap loads into every sandbox (``--seccomp``): the keyring
    system calls and ``setsid`` fail with EPERM on x86-64 (and its 32-bit and x32 ABIs)
    and arm64; everything else is allowed (on other architectures, everything)."""
    program: list[tuple[int, int, int, int]] = []  # (code, jump if true, if false, k)
    # One block per architecture: load arch; not this one: skip to the next block; load
    # the call's number; a denied call: jump to the final "deny"; else allow.
    deny = sum(4 + len(calls) for calls in _DENIED_CALLS.values()) + 1
    for arch, calls in _DENIED_CALLS.items():
        program.append((_BPF_LD_W_ABS, 0, 0, 4))
        program.append((_BPF_JEQ_K, 0, 2 + len(calls), arch))
        program.append((_BPF_LD_W_ABS, 0, 0, 0))
        for call in calls:
            program.append((_BPF_JEQ_K, deny - len(program) - 1, 0, call))
        program.append((_BPF_RET_K, 0, 0, _SECCOMP_RET_ALLOW))
    program.append((_BPF_RET_K, 0, 0, _SECCOMP_RET_ALLOW))  # another architecture
    program.append((_BPF_RET_K, 0, 0, _SECCOMP_RET_ERRNO | errno.EPERM))
    return b"".join(struct.pack("=HBBI", *op) for op in program)


def data_fd(data: bytes) -> int:
    """A descriptor to read ``data`` from, from its start (an anonymous in-memory file),
    for bwrap's ``--seccomp`` and ``--args``; the caller closes it once the child has
    started."""
    fd = os.memfd_create("ecarte-bwrap", os.MFD_CLOEXEC)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _ancestors(path: str) -> Iterator[str]:
    """The directories above ``path``, ``/`` and the system directories excepted."""
    parent = os.path.dirname(path)
    while parent != "/" and not any(_inside(parent, s) for s in SYSTEM_PATHS):
        yield parent
        parent = os.path.dirname(parent)


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


REAP_WAIT: Final = 0.2
"""Seconds :func:`reap_escapees` waits for the orphans it killed to be reaped."""


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
    orphans = [pid for pid, _, parent, _ in proc_stats() if parent == me and pid not in keep]
    for pid in orphans:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    # Reaped without blocking, for a moment at most: a killed process stuck in the kernel
    # (a hung network file system) must not stall every game; the next call reaps it.
    waiting = set(orphans)
    deadline = time.monotonic() + REAP_WAIT
    while waiting:
        for pid in list(waiting):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                waiting.discard(pid)
        if not waiting or time.monotonic() >= deadline:
            break
        time.sleep(0.001)
    return len(orphans)


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
