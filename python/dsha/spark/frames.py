"""What the Spark API takes: a Spark DataFrame (classic or Spark Connect). A pandas, pyarrow or polars frame is the
Arrow engine's (``arrow_frame``: ``dsha.fingerprint`` and friends hand it over when no Spark engine is asked for);
anything else users commonly hand it (a path, a frame beside a Spark DataFrame or with ``engine=``) is a TypeError
that names the call that takes it, instead of an AttributeError about ``sparkSession`` that reads like a PySpark
bug."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, List, Optional, Sequence

from dsha.core.names import Names, without_excluded

if TYPE_CHECKING:
    from dsha.spark.types import DataFrameLike, SparkSessionLike

__all__ = ["arrow_frame", "excluding", "session_of"]

_FRAME_MODULES = ("pandas", "pyarrow", "polars")


def arrow_frame(obj: Any) -> bool:
    """Whether ``obj`` is an in-memory frame the Arrow engine reads (a pandas, pyarrow or polars object), judged by
    its type's module: nothing is imported. ``dsha.fingerprint``, ``equal``, ``state`` and ``diff`` hand these to
    the Arrow engine (:mod:`dsha.digests`, :mod:`dsha.jarfree.diff`)."""
    return type(obj).__module__.split(".")[0] in _FRAME_MODULES

# What each call is, by the engine that takes the object: (the Arrow engine's call, or None; the Spark way in)
_ARROW_CALL = {"dsha.fingerprint": "dsha.arrow.fingerprint({x})",
               "dsha.state": "dsha.arrow.state({x})",
               "dsha.equal": "dsha.Comparison(dsha.arrow.fingerprint(left), dsha.arrow.fingerprint(right))",
               "dsha.diff": "dsha.arrow.diff.diff(left, right)"}


def session_of(obj: Any, call: str) -> SparkSessionLike:
    """The session of the Spark DataFrame ``obj``, given to ``call`` (e.g. ``"dsha.fingerprint"``); a TypeError
    naming the right call for anything else."""
    session = getattr(obj, "sparkSession", None)
    if session is not None:
        return session  # type: ignore[no-any-return]
    raise TypeError(_wrong_input(obj, call))


def _wrong_input(obj: Any, call: str) -> str:
    module = type(obj).__module__.split(".")[0]
    if isinstance(obj, (str, os.PathLike)):
        what, arg, spark_way = f"a path ({os.fspath(obj)!r})", repr(os.fspath(obj)), (
            f"dsha.fingerprint_path(spark, {os.fspath(obj)!r}, format=...), or {call}(spark.read.load(...))"
            if call == "dsha.fingerprint" else f"{call}(spark.read.load(...))")
    elif module in _FRAME_MODULES:  # here with engine="jvm" or "python", or beside a Spark DataFrame
        what, arg = f"a {module} {type(obj).__name__}", "df"
        spark_way = f"{call}(spark.createDataFrame(...)) for Spark's digest of the same rows"
    elif module == "pyspark" and hasattr(obj, "to_spark"):  # pandas API on Spark
        return f"{call} takes a Spark DataFrame, not a pandas-on-Spark one: {call}(df.to_spark())"
    else:
        return f"{call} takes a Spark DataFrame, not {type(obj).__module__}.{type(obj).__name__}"
    arrow = _ARROW_CALL.get(call)
    without_spark = f"; without Spark, the Arrow engine: {arrow.format(x=arg)}" if arrow else ""
    return f"{call} takes a Spark DataFrame, not {what}: {spark_way}{without_spark}"


def excluding(exclude: Names, frames: Sequence[DataFrameLike], sides: Sequence[str],
              columns: Optional[Sequence[str]] = None, key: Sequence[str] = ()) -> List[DataFrameLike]:
    """``frames`` without the columns ``exclude`` names (``columns``, when given, without them), each a ``select``;
    the frames as they are when nothing is excluded. The rule and its errors: :func:`dsha.core.names.without_excluded`
    (``sides`` are the frames' names in its messages: ``"the DataFrame"``, ``"left"``, ``"right"``)."""
    kept = without_excluded(exclude, [(side, df.columns) for side, df in zip(sides, frames)], columns, key)
    if kept is None:
        return list(frames)
    return [df.select(*["`" + c.replace("`", "``") + "`" for c in names]) for df, names in zip(frames, kept)]
