"""A table that Spark cannot find, said in one line with the closest names of the session's catalog ("did you
mean"), wherever dsha reads a table by name (``table:NAME`` inputs) or runs the query that first reads it (a Spark
Connect ``spark.table(...)`` is read only when dsha's query runs)."""
from __future__ import annotations

import functools
import re
from contextlib import suppress
from typing import TYPE_CHECKING, Any, List, Optional, Type

from dsha.core.names import did_you_mean
from dsha.dependencies import pyspark_sql
from dsha.errors import TableNotFoundError

if TYPE_CHECKING:
    from dsha.spark.types import SparkSessionLike

__all__ = ["active_session", "table_not_found"]

# Spark 3.5 to 4.x: "[TABLE_OR_VIEW_NOT_FOUND] The table or view `db`.`t` cannot be found."
_NOT_FOUND = re.compile(r"TABLE_OR_VIEW_NOT_FOUND\]\s*The table or view ((?:`(?:[^`]|``)*`\.?)+) cannot be found")


def _catalog_names(spark: SparkSessionLike, name: str) -> List[str]:
    """The names a user could have meant: the current database's tables and views (temporary ones too), and those
    of the database ``name`` qualifies, written as qualified."""
    parts = name.split(".")
    out = [t.name for t in spark.catalog.listTables()]
    if len(parts) > 1:
        database = ".".join(parts[:-1])
        with suppress(Exception):  # no such database: the current one's names only
            out += [f"{database}.{t.name}" for t in spark.catalog.listTables(database)]
    return out


def table_not_found(spark: Optional[SparkSessionLike], error: BaseException,
                    name: Optional[str] = None) -> Optional[TableNotFoundError]:
    """A :class:`TableNotFoundError` for Spark's ``error`` when it is a table that cannot be found (``name``: the
    name as the user gave it; else read from the message), else None."""
    text = str(error)
    found = _NOT_FOUND.search(text)
    if found is None and not (name is not None and "Table or view not found" in text):
        return None
    if name is None:
        assert found is not None
        name = ".".join(p.replace("``", "`") for p in re.findall(r"`((?:[^`]|``)*)`", found.group(1)))
    suggestion = ""
    if spark is not None:
        try:
            suggestion = did_you_mean([name], [n for n in _catalog_names(spark, name) if n.lower() != name.lower()])
        except Exception:  # a catalog that cannot list: no suggestion
            suggestion = ""
    return _error_class()(f"[TABLE_OR_VIEW_NOT_FOUND] no table or view {name} in the session's catalog{suggestion}")


@functools.cache
def _error_class() -> Type[TableNotFoundError]:
    """``TableNotFoundError`` that is also pyspark's ``AnalysisException`` (what a PySpark user catches for a missing
    table), made here, where pyspark is imported, so that ``import dsha`` needs no pyspark (tests/layers)."""
    try:
        from pyspark.errors import AnalysisException
    except ImportError:  # pyspark before 3.4: the dsha error alone
        return TableNotFoundError

    class SparkTableNotFoundError(TableNotFoundError, AnalysisException):  # type: ignore[misc]
        __doc__ = TableNotFoundError.__doc__

        def __init__(self, message: str) -> None:
            AnalysisException.__init__(self, message)  # a message, no error class: str() is the message

    SparkTableNotFoundError.__module__ = TableNotFoundError.__module__
    SparkTableNotFoundError.__qualname__ = SparkTableNotFoundError.__name__ = "TableNotFoundError"
    return SparkTableNotFoundError


def active_session() -> Any:
    """The session of this thread, if any (for an error raised where no session was passed)."""
    try:
        return pyspark_sql.SparkSession.getActiveSession()
    except Exception:
        return None
