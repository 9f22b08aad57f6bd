"""Phase lines: one line per step of a long command, with its elapsed time, for a person watching a terminal
(``dsha diff``: sketch both sides and decode the difference, read the differing rows, ...).

The steps are named where they run (``step`` as a context manager, ``timed`` as a decorator), and cost nothing unless
a reporter is active: the command line activates one (``reporting``) when stderr is a terminal (``wanted``), or when
asked to (``dsha diff --phases``); nothing is printed otherwise, so logs, pipes and the Python API see no new output.
A step's line is printed when it ends (``dsha: <step>: 2.31 s``): Spark's own progress bar, which redraws its line
while a job runs, is cleared by then.
"""
from __future__ import annotations

import functools
import sys
import time
from contextlib import contextmanager
from contextvars import ContextVar
from typing import IO, Any, Callable, Iterator, Optional, TypeVar

__all__ = ["Phases", "reporting", "step", "timed", "wanted"]

F = TypeVar("F", bound=Callable[..., Any])


class Phases:
    """Writes a line per finished step to ``stream``: ``dsha: <what>: <seconds> s`` (``clock``: seconds, monotonic);
    a step shorter than ``shortest`` seconds (no job ran: the work was done before) is not worth a line."""

    def __init__(self, stream: Optional[IO[str]] = None, clock: Callable[[], float] = time.monotonic,
                 shortest: float = 0.01) -> None:
        self.stream = stream
        self.clock = clock
        self.shortest = shortest

    def done(self, what: str, seconds: float) -> None:
        if seconds >= self.shortest:
            print(f"dsha: {what}: {seconds:.2f} s", file=self.stream or sys.stderr, flush=True)


_active: ContextVar[Optional[Phases]] = ContextVar("dsha_phases", default=None)


def wanted(stream: Any, asked: bool = False, quiet: bool = False) -> bool:
    """Whether to print phase lines on ``stream``: when ``asked`` (a flag), else when it is a terminal and the
    command is not ``quiet`` (``--quiet``, ``--json``)."""
    if asked:
        return True
    if quiet:
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):  # a closed or detached stream
        return False


@contextmanager
def reporting(phases: Optional[Phases]) -> Iterator[None]:
    """Steps of the block are reported to ``phases`` (None: not reported)."""
    token = _active.set(phases)
    try:
        yield
    finally:
        _active.reset(token)


@contextmanager
def step(what: str) -> Iterator[None]:
    """A step named ``what``: its line with its time when it ends (also when it fails: the time it took to fail is
    not printed, the error says what happened)."""
    phases = _active.get()
    if phases is None:
        yield
        return
    started = phases.clock()
    yield
    phases.done(what, phases.clock() - started)


def timed(what: str) -> Callable[[F], F]:
    """A function whose every call is the step ``what``."""
    def decorate(f: F) -> F:
        @functools.wraps(f)
        def call(*args: Any, **kwargs: Any) -> Any:
            with step(what):
                return f(*args, **kwargs)
        return call  # type: ignore[return-value]
    return decorate
