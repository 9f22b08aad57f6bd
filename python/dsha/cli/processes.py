"""The processes the command line started (PySpark's ``spark-submit`` launcher and the driver JVM it becomes), found
through ``/proc`` and ended when the command is interrupted.

PySpark starts the driver JVM with SIGINT ignored and counts on it exiting when its stdin closes; a JVM busy
starting or running a job does not, and outlives an interrupted command (parent pid 1, its temporary directories
left). So an interrupted command ends them itself: SIGTERM first (the JVM's shutdown hooks delete its directories),
SIGKILL for what is still there after a short grace."""
from __future__ import annotations

import contextlib
import os
import signal
import time
from typing import Dict, Iterable, Set

__all__ = ["children", "descendants", "end"]


def _parents() -> Dict[int, int]:
    """pid -> parent pid, for every process this user can see (empty where there is no ``/proc``)."""
    out: Dict[int, int] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # "pid (command) state ppid ...": the command may hold spaces and parentheses, so split after the last ')'
        out[int(name)] = int(stat[stat.rfind(b")") + 2:].split()[1])
    return out


def descendants(pid: int) -> Set[int]:
    """Every process below ``pid``: its children, theirs, ..."""
    parents = _parents()
    found: Set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier and p not in found}
        found |= frontier
    return found


def children() -> Set[int]:
    """This process's descendants now (those that exist before a session starts are not the session's)."""
    return descendants(os.getpid())


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs; a child of this process that ended is reaped here (no zombie left)."""
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    except ChildProcessError:  # not a child of this process (a grandchild), or reaped already
        pass
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2:][:1] != b"Z"


def end(pids: Iterable[int], grace: float = 1.0) -> None:
    """Ends ``pids``: SIGTERM, then SIGKILL for those still running after ``grace`` seconds; returns when all have
    ended."""
    pending = set(pids)
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 2.0)):
        for pid in pending:
            with contextlib.suppress(ProcessLookupError, PermissionError):  # ended already; not ours
                os.kill(pid, sig)
        deadline = time.monotonic() + wait
        while True:
            pending = {p for p in pending if _alive(p)}
            if not pending or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        if not pending:
            return
