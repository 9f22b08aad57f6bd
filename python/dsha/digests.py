"""``dsha.fingerprint``, ``dsha.equal``, ``dsha.state``: through the dsha jar (:mod:`dsha.spark.digests`) or, on a
session without it, by Python on the executors (:mod:`dsha.jarfree`): the same digests either way.

``engine=`` (``"auto"``, ``"jvm"``, ``"python"``) chooses; else the session setting ``spark.dsha.engine``; else
``auto``: the jar when the session has its functions (asked once per session).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple, Union

from dsha.core.fingerprint import Comparison, Fingerprint
from dsha.jarfree.engine import engine_for
from dsha.spark import digests as jvm
from dsha.spark.frames import session_of
from dsha.spark.keys import Key

if TYPE_CHECKING:
    from dsha.spark.types import ColumnOrName, DataFrameLike

__all__ = ["equal", "fingerprint", "state"]

Columns = Union[str, Sequence["ColumnOrName"], None]


def _python_path(what: str, exact: bool = True) -> None:
    """What only the jar computes, refused on the jar-free path with what to do."""
    if not exact:
        raise ValueError(f"{what}(..., exact=False) reads file metadata in the driver's JVM: it needs the dsha jar")


def _names(cols: Tuple[ColumnOrName, ...], columns: Columns) -> Optional[List[ColumnOrName]]:
    chosen = jvm.columns_of(cols, columns)
    return chosen or None


def fingerprint(df: DataFrameLike, *cols: ColumnOrName, columns: Columns = None, exact: bool = True,
                algorithm: Optional[str] = None, key: Optional[Key] = None,
                engine: Optional[str] = None) -> Fingerprint:
    # session_of: not a Spark DataFrame is a TypeError naming the right call
    if engine_for(session_of(df, "dsha.fingerprint"), engine) == "jvm":
        return jvm.fingerprint(df, *cols, columns=columns, exact=exact, algorithm=algorithm, key=key)
    _python_path("dsha.fingerprint", exact)
    from dsha.jarfree import digests

    return digests.fingerprint(df, _names(cols, columns), algorithm, key)  # type: ignore[arg-type]


def equal(left: DataFrameLike, right: DataFrameLike, algorithm: Optional[str] = None, key: Optional[Key] = None,
          engine: Optional[str] = None) -> Comparison:
    session_of(right, "dsha.equal")
    if engine_for(session_of(left, "dsha.equal"), engine) == "jvm":
        return jvm.equal(left, right, algorithm=algorithm, key=key)
    from dsha.jarfree import digests

    return digests.equal(left, right, algorithm, key)


def state(df: DataFrameLike, columns: Columns = None, algorithm: Optional[str] = None, key: Optional[Key] = None,
          engine: Optional[str] = None) -> bytes:
    if engine_for(session_of(df, "dsha.state"), engine) == "jvm":
        return jvm.state(df, columns, algorithm=algorithm, key=key)
    from dsha.jarfree import digests

    return digests.state(df, _names((), columns), algorithm, key)  # type: ignore[arg-type]


fingerprint.__doc__ = (jvm.fingerprint.__doc__ or "") + """
    ``engine``: ``"jvm"`` (the jar), ``"python"`` (no jar: Python on the executors, every algorithm; a key travels to
    the executors pickled in the Python function, see :mod:`dsha.jarfree.keys`) or ``"auto"`` (default: the session
    setting ``spark.dsha.engine``, else the jar when the session has it)."""
equal.__doc__ = (jvm.equal.__doc__ or "") + """
    ``engine`` as in :func:`fingerprint`."""
state.__doc__ = (jvm.state.__doc__ or "") + """
    ``engine`` as in :func:`fingerprint`."""
