"""``dsha.fingerprint``, ``dsha.equal``, ``dsha.state``: through the dsha jar (:mod:`dsha.spark.digests`) or, on a
session without it, by Python on the executors (:mod:`dsha.jarfree`): the same digests either way.

``engine=`` (``"auto"``, ``"jvm"``, ``"python"``) chooses; else the session setting ``spark.dsha.engine``; else
``auto``: the jar when the session has its functions (asked once per session).

A pandas, pyarrow or polars frame (every input one, ``engine`` not given or ``"auto"``) is hashed by the Arrow engine
in this process (:mod:`dsha.arrow`: the same ``Fingerprint``, ``Comparison`` and state bytes, pyarrow imported then).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Tuple, Union

from dsha.core.fingerprint import Comparison, Fingerprint
from dsha.core.names import Names, name_list, without_excluded
from dsha.jarfree.engine import engine_for
from dsha.spark import digests as jvm
from dsha.spark.frames import arrow_frame, excluding, session_of
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


def on_arrow(frames: Sequence[Any], engine: Optional[str]) -> bool:
    """Whether a call runs on the Arrow engine: every input a pandas, pyarrow or polars frame and no Spark engine
    asked for (with ``engine="jvm"`` or ``"python"``, or beside a Spark DataFrame, a frame is ``session_of``'s
    TypeError naming the calls that take it)."""
    return engine in (None, "auto") and all(arrow_frame(f) for f in frames)


def _frame_columns(call: str, df: Any, cols: Tuple[Any, ...], columns: Any) -> Optional[List[str]]:
    """The columns given for a frame: names only (a Spark Column is a TypeError)."""
    chosen = jvm.columns_of(cols, columns)
    for c in chosen:
        if not isinstance(c, str):
            raise TypeError(f"{call} of a {type(df).__module__.split('.')[0]} {type(df).__name__} takes column names, "
                            f"not {type(c).__module__}.{type(c).__name__}")
    return chosen or None  # type: ignore[return-value]


def fingerprint(df: DataFrameLike, *cols: ColumnOrName, columns: Columns = None, exact: bool = True,
                algorithm: Optional[str] = None, key: Optional[Key] = None,
                engine: Optional[str] = None, exclude: Names = None) -> Fingerprint:
    if on_arrow([df], engine):
        if not exact:
            raise ValueError("dsha.fingerprint(..., exact=False) reads the metadata of a Spark DataFrame's files; a "
                             f"{type(df).__module__.split('.')[0]} {type(df).__name__} has none: leave exact= out")
        import dsha.arrow

        return dsha.arrow.fingerprint(df, _frame_columns("dsha.fingerprint", df, cols, columns),
                                      algorithm=algorithm, key=key, exclude=exclude)
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
    if on_arrow([left, right], engine):
        import dsha.arrow
        from dsha.arrow._sources import input_names

        kept: Sequence[Optional[List[str]]] = [None, None]
        if name_list(exclude, "exclude"):  # each name dropped from the sides that have it, as on Spark
            kept = without_excluded(exclude, [("left", input_names(left)), ("right", input_names(right))]) or kept
        return Comparison(dsha.arrow.fingerprint(left, kept[0], algorithm=algorithm, key=key),
                          dsha.arrow.fingerprint(right, kept[1], algorithm=algorithm, key=key))
    session, _ = session_of(left, "dsha.equal"), session_of(right, "dsha.equal")
    left, right = excluding(exclude, [left, right], ["left", "right"])
    if engine_for(session, engine) == "jvm":
        return jvm.equal(left, right, algorithm=algorithm, key=key)
    from dsha.jarfree import digests

    return digests.equal(left, right, algorithm, key)


def state(df: DataFrameLike, columns: Columns = None, algorithm: Optional[str] = None, key: Optional[Key] = None,
          engine: Optional[str] = None, exclude: Names = None) -> bytes:
    if on_arrow([df], engine):
        import dsha.arrow

        return dsha.arrow.state(df, _frame_columns("dsha.state", df, (), columns), algorithm=algorithm, key=key,
                                exclude=exclude)
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
    setting ``spark.dsha.engine``, else the jar when the session has it).

    A pandas, pyarrow or polars frame instead of ``df`` (``engine`` not given or ``"auto"``): the Arrow engine hashes
    it in this process, ``dsha.arrow.fingerprint(df, columns, ...)`` (columns by name; ``exact=False`` has no files
    to read and is a ``ValueError``). A path is a ``TypeError`` naming ``dsha.fingerprint_path`` and
    ``dsha.arrow.fingerprint``."""
equal.__doc__ = (jvm.equal.__doc__ or "") + """
    ``exclude``: columns left out of both sides (audit columns such as ``_ingested_at``), each dropped from the sides
    that have it: ``dsha.equal(a, b, exclude=["_ingested_at"])`` is ``dsha.equal(a.drop(...), b.drop(...))``. A name
    neither side has is a ``ValueError`` with the closest names.

    ``engine`` as in :func:`fingerprint`. Two pandas, pyarrow or polars frames: compared by the Arrow engine's
    fingerprints (``dsha.arrow.fingerprint`` of each side), as in :func:`fingerprint`."""
state.__doc__ = (jvm.state.__doc__ or "") + """
    ``exclude``, ``engine`` and a pandas, pyarrow or polars frame (``dsha.arrow.state``) as in :func:`fingerprint`."""
