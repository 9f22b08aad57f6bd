"""Digests of DataFrames in one Spark job: ``dsha.fingerprint``, ``dsha.equal``, ``dsha.state`` (any algorithm, with
its key), and the approximate dsha-meta-v1 of a DataFrame read from files."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Tuple, Union

import dsha.functions as fn
from dsha.core.algorithms import BY_ID, META_ALGORITHM, algorithm_id
from dsha.core.fingerprint import Comparison, Fingerprint
from dsha.dependencies import F
from dsha.spark.bridge import java_errors, jvm_api
from dsha.spark.frames import session_of
from dsha.spark.keys import Key, key_reference
from dsha.spark.session import ensure_loaded, translate_errors
from dsha.spark.tree import merged, shuffle_for, task_count, use_tree

if TYPE_CHECKING:
    from pyspark.sql import Column

    from dsha.spark.types import ColumnOrName, DataFrameLike, SparkSessionLike

__all__ = ["Digests", "columns_of", "empty_state", "equal", "fingerprint", "state", "state_bytes"]

Columns = Union[str, Sequence["ColumnOrName"], None]


def state_bytes(algorithm: str) -> int:
    """A state's bytes, near enough (its combiner's words and row count): what a tree of them weighs."""
    return BY_ID[algorithm].state_bytes + 16


class Digests:
    """The aggregate functions of one algorithm (and key): ``fingerprint(*cols)`` / ``state(*cols)`` Columns. A key
    is handed to Spark's driver for this session (``keys.key_reference``) and named in the query as ``conf:NAME``,
    with its keyed algorithm (``conf:NAME#ALGORITHM``), so the session's settings are never changed for it."""

    def __init__(self, spark: SparkSessionLike, algorithm: Optional[str], key: Optional[Key]):
        self.algorithm = algorithm_id(algorithm, key)
        self.reference = None if key is None else key_reference(spark, key, self.algorithm)
        self.state_bytes = state_bytes(self.algorithm)

    def _call(self, form: str, cols: Sequence[ColumnOrName]) -> Column:
        name = BY_ID[self.algorithm].sql + form
        columns = tuple(cols) or ("*",)
        if self.reference is None:
            return getattr(fn, name)(*columns)  # type: ignore[no-any-return]
        return getattr(fn, name)(F.lit(self.reference), *columns)  # type: ignore[no-any-return]

    def fingerprint(self, *cols: ColumnOrName) -> Column:
        return self._call("_fingerprint", cols)

    def state(self, *cols: ColumnOrName) -> Column:
        return self._call("_state", cols)


def columns_of(cols: Tuple[ColumnOrName, ...], columns: Columns) -> List[ColumnOrName]:
    """The columns given positionally or as ``columns=`` (a name or a list), not both."""
    if columns is None:
        return list(cols)
    if cols:
        raise TypeError("give the columns positionally or as columns=, not both")
    return [columns] if isinstance(columns, str) else list(columns)


def _from_struct(f: Any) -> Fingerprint:
    """A Fingerprint from SQL's struct: its BIGINT ``rows`` is the u64 count read as two's complement (SPEC §11),
    turned back into the u64 that ``Fingerprint.from_state`` and the digest carry."""
    return Fingerprint(digest=f["digest"], rows=int(f["rows"]) % (1 << 64), schema_digest=f["schema_digest"],
                       content_sum=f["content_sum"], schema=f["schema"], algorithm=f["algorithm"])


def _first(df: DataFrameLike) -> Any:
    row = df.first()
    assert row is not None  # a global aggregate has one row
    return row


def fingerprint(df: DataFrameLike, *cols: ColumnOrName, columns: Columns = None, exact: bool = True,
                algorithm: Optional[str] = None, key: Optional[Key] = None) -> Fingerprint:
    """The fingerprint of ``df`` (all columns, or the given ones: positionally or as ``columns=[...]``), computed in
    one Spark job.

    ``exact=False``: an approximate fingerprint from file metadata only (``dsha-meta-v1``, SPEC.md §13: the schema
    and each file's path, size, modification time and ETag), constant in the data size, for a DataFrame read from
    files (classic sessions). It is not a content digest — its algorithm and digest prefix differ, ``rows`` is -1
    (unknown) — and it may say "changed" when only the layout or a timestamp changed; it misses only a rewrite that
    keeps a file's path, size and modification time.

    Tamper-evident digests (SPEC.md §16): ``algorithm="secure"`` (dsha-secure-v1, no secret) or ``key=`` (bytes of
    at least 16, or a hex/base64 str: dsha-keyed-v1). The key is handed to Spark's driver for this session alone,
    never in the query or a session setting (SPEC.md §16.2).
    """
    session_of(df, "dsha.fingerprint")  # not a Spark DataFrame: a TypeError naming the right call
    chosen = columns_of(cols, columns)
    if not exact:
        if algorithm is not None or key is not None:
            raise ValueError("exact=False (dsha-meta-v1) takes no algorithm or key")
        return _metadata_fingerprint(df.select(*chosen) if chosen else df)
    ensure_loaded(df.sparkSession)
    digests = Digests(df.sparkSession, algorithm, key)
    size = digests.state_bytes
    partitions = task_count(df, size)
    with translate_errors():
        if use_tree(partitions, size):  # many partitions of large states: merged as a tree (spark/tree.py)
            with shuffle_for(df.sparkSession, partitions, size):
                tree = merged(df, digests.state(*chosen), "dsha_merge", partitions, size)
                return _from_struct(_first(tree.selectExpr("dsha_final_fingerprint(s) AS f"))["f"])
        row = _first(df.agg(digests.fingerprint(*chosen).alias("f")))
    return _from_struct(row["f"])


def equal(left: DataFrameLike, right: DataFrameLike, algorithm: Optional[str] = None,
          key: Optional[Key] = None) -> Comparison:
    """Compares two DataFrames by their dsha fingerprints: ``if dsha.equal(a, b): ...``; ``.reason`` otherwise.

    Both fingerprints come from one query (two aggregates joined into one row), so the two sides are scanned and
    hashed side by side rather than one after the other. DataFrames of different sessions, and a side whose states
    are merged as a tree (:func:`fingerprint`), are hashed one at a time.
    """
    session_of(left, "dsha.equal")  # not a Spark DataFrame: a TypeError naming the right call
    session_of(right, "dsha.equal")  # not a Spark DataFrame: a TypeError naming the right call
    size = state_bytes(algorithm_id(algorithm, key))
    if left.sparkSession is not right.sparkSession or any(use_tree(task_count(df, size), size) for df in (left, right)):
        # other sessions, or a side of many partitions of large states (merged as a tree by fingerprint: spark/tree.py)
        return Comparison(fingerprint(left, algorithm=algorithm, key=key),
                          fingerprint(right, algorithm=algorithm, key=key))
    ensure_loaded(left.sparkSession)
    digests = Digests(left.sparkSession, algorithm, key)
    with translate_errors():
        row = _first(left.agg(digests.fingerprint().alias("left"))
                     .crossJoin(right.agg(digests.fingerprint().alias("right"))))
    return Comparison(_from_struct(row["left"]), _from_struct(row["right"]))


def state(df: DataFrameLike, columns: Columns = None, algorithm: Optional[str] = None,
          key: Optional[Key] = None) -> bytes:
    """The digest state of ``df`` (all columns, or the given names/Columns), computed in one Spark job;
    ``algorithm``/``key`` as in :func:`dsha.fingerprint` (a keyed state merges and finalises without its key)."""
    ensure_loaded(df.sparkSession)
    chosen = columns_of((), columns)
    digests = Digests(df.sparkSession, algorithm, key)
    size = digests.state_bytes
    partitions = task_count(df, size)
    with translate_errors(), shuffle_for(df.sparkSession, partitions, size):
        # many partitions of large states: merged as a tree (spark/tree.py), else one global aggregate
        row = _first(merged(df, digests.state(*(chosen or ["*"])), "dsha_merge", partitions, size))
    return bytes(row["s"])


def empty_state(df: DataFrameLike) -> bytes:
    """The dsha-v1 state of no rows of ``df``'s columns: its canonical schema, from Spark, no file read."""
    session_of(df, "dsha.state")  # not a Spark DataFrame: a TypeError naming the right call
    return state(df.limit(0))


def _metadata_fingerprint(df: DataFrameLike) -> Fingerprint:
    api = jvm_api(df.sparkSession, "dsha.fingerprint(..., exact=False)")
    r = java_errors(lambda: api.metadataDigest(df._jdf))
    return Fingerprint(digest=r.digest(), rows=-1, schema_digest=r.schemaDigestHex(), content_sum="",
                       schema=r.schemaText(), algorithm=META_ALGORITHM)
