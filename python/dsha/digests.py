"""``dsha.fingerprint``, ``dsha.equal``, ``dsha.state``: through the dsha jar (:mod:`dsha.spark.digests`) or, on a
session without it, by Python on the executors (:mod:`dsha.jarfree`): the same digests either way.

``engine=`` (``"auto"``, ``"jvm"``, ``"python"``) chooses; else the session setting ``spark.dsha.engine``; else
``auto``: the jar when the session has its functions (asked once per session).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple, Union

from dsha.core.fingerprint import Comparison, Fingerprint
from dsha.core.names import Names, name_list
from dsha.jarfree.engine import engine_for
from dsha.spark import digests as jvm
from dsha.spark.frames import excluding, session_of
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


def _excluded(df: DataFrameLike, cols: Tuple[ColumnOrName, ...], columns: Columns, exclude: Names
              ) -> Optional[DataFrameLike]:
    """``df``'s chosen columns (``cols`` or ``columns``, default all) without ``exclude``, as one DataFrame; None when
    nothing is excluded. The rule: :func:`dsha.core.names.without_excluded`."""
    if not name_list(exclude, "exclude"):
        return None
    chosen = name_list(jvm.columns_of(cols, columns), "columns= with exclude=")  # type: ignore[arg-type]
    return excluding(exclude, [df], ["the DataFrame"], chosen or None)[0]


def fingerprint(df: DataFrameLike, *cols: ColumnOrName, columns: Columns = None, exact: bool = True,
                algorithm: Optional[str] = None, key: Optional[Key] = None,
                engine: Optional[str] = None, exclude: Names = None) -> Fingerprint:
    # session_of: not a Spark DataFrame is a TypeError naming the right call
    session = session_of(df, "dsha.fingerprint")
    without = _excluded(df, cols, columns, exclude)
    if without is not None:
        df, cols, columns = without, (), None
    if engine_for(session, engine) == "jvm":
        return jvm.fingerprint(df, *cols, columns=columns, exact=exact, algorithm=algorithm, key=key)
    _python_path("dsha.fingerprint", exact)
    from dsha.jarfree import digests

    return digests.fingerprint(df, _names(cols, columns), algorithm, key)  # type: ignore[arg-type]


def equal(left: DataFrameLike, right: DataFrameLike, algorithm: Optional[str] = None, key: Optional[Key] = None,
          engine: Optional[str] = None, exclude: Names = None) -> Comparison:
    session, _ = session_of(left, "dsha.equal"), session_of(right, "dsha.equal")
    left, right = excluding(exclude, [left, right], ["left", "right"])
    if engine_for(session, engine) == "jvm":
        return jvm.equal(left, right, algorithm=algorithm, key=key)
    from dsha.jarfree import digests

    return digests.equal(left, right, algorithm, key)


def state(df: DataFrameLike, columns: Columns = None, algorithm: Optional[str] = None, key: Optional[Key] = None,
          engine: Optional[str] = None, exclude: Names = None) -> bytes:
    session = session_of(df, "dsha.state")
    without = _excluded(df, (), columns, exclude)
    if without is not None:
        df, columns = without, None
    if engine_for(session, engine) == "jvm":
        return jvm.state(df, columns, algorithm=algorithm, key=key)
    from dsha.jarfree import digests

    return digests.state(df, _names((), columns), algorithm, key)  # type: ignore[arg-type]


fingerprint.__doc__ = (jvm.fingerprint.__doc__ or "") + """
    ``exclude``: columns left out (a name or a list), such as audit columns (``_ingested_at``): the digest is the
    one of ``df.drop(*exclude)``. With ``columns``, the given columns without the excluded ones. A name no column
    has is a ``ValueError`` with the closest names; leaving out every column is one too.

    ``engine``: ``"jvm"`` (the jar), ``"python"`` (no jar: Python on the executors, every algorithm; a key travels to
    the executors pickled in the Python function, see :mod:`dsha.jarfree.keys`) or ``"auto"`` (default: the session
    setting ``spark.dsha.engine``, else the jar when the session has it)."""
equal.__doc__ = (jvm.equal.__doc__ or "") + """
    ``exclude``: columns left out of both sides (audit columns such as ``_ingested_at``), each dropped from the sides
    that have it: ``dsha.equal(a, b, exclude=["_ingested_at"])`` is ``dsha.equal(a.drop(...), b.drop(...))``. A name
    neither side has is a ``ValueError`` with the closest names.

    ``engine`` as in :func:`fingerprint`."""
state.__doc__ = (jvm.state.__doc__ or "") + """
    ``exclude`` as in :func:`fingerprint`; ``engine`` as in :func:`fingerprint`."""
