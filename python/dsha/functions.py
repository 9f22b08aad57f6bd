"""Column functions for dsha's SQL functions. They call the functions by name, so the same code works in classic
PySpark and over Spark Connect (the session must have the extension: see :func:`dsha.configure`)."""
from __future__ import annotations

from typing import Union

from pyspark.sql import Column
from pyspark.sql import functions as F

from dsha._session import check_active_session

ColumnOrName = Union[Column, str]


def _column_types() -> tuple:
    """Column classes: in pyspark 3.5 a Spark Connect Column is not a pyspark.sql.Column (in 4.x it is)."""
    try:
        from pyspark.sql.connect.column import Column as ConnectColumn
    except Exception:  # Spark Connect's dependencies (grpc, pandas, pyarrow) are optional
        return (Column,)
    return (Column, ConnectColumn)


def _columns(cols: tuple) -> list:
    if not cols:
        raise ValueError("dsha needs at least one column; pass \"*\" for all columns")
    for c in cols:
        if not isinstance(c, (str,) + _column_types()):
            raise TypeError(f"dsha functions take column names or Columns, not {type(c).__name__}: {c!r}")
    # Raise DshaNotLoadedError now rather than an UNRESOLVED_ROUTINE later, when the active session can tell.
    check_active_session()
    # F.col("*") is the star, expanded by the analyzer to the input's columns (classic and Spark Connect).
    return [F.col(c) if isinstance(c, str) else c for c in cols]


def logical_hash(*cols: ColumnOrName) -> Column:
    """The 16-byte dsha row digest of the given columns (BINARY), identified by name.

    >>> df.select(logical_hash("*").alias("h"))
    >>> df.select(logical_hash("id", "name"))   # same as logical_hash("name", "id")
    """
    return F.call_function("logical_hash", *_columns(cols))


def dsha(*cols: ColumnOrName) -> Column:
    """Aggregate: the dsha digest string of the rows (order-independent, duplicate-sensitive).

    >>> df.agg(dsha("*")).first()[0]
    'f81b4f5012...'
    >>> df.groupBy("day").agg(dsha("*").alias("digest"))
    """
    return F.call_function("dsha", *_columns(cols))


def dsha_fingerprint(*cols: ColumnOrName) -> Column:
    """Aggregate: the digest and its parts as a struct (digest, rows, schema_digest, content_sum, schema,
    algorithm, multihash).

    >>> df.agg(dsha_fingerprint("*").alias("f")).select("f.rows", "f.digest")
    """
    return F.call_function("dsha_fingerprint", *_columns(cols))


__all__ = ["dsha", "dsha_fingerprint", "logical_hash"]
