"""``dsha.diff``: through the dsha jar (:mod:`dsha.spark.diff`) or, on a session without it, by Python on the
executors: the same ``Diff``.

Without the jar, each partition's rows (Arrow batches, ``mapInArrow``) are sketched by the Arrow engine
(:mod:`dsha.arrow.sketch`, SPEC.md §17: the bytes of the jar's ``dsha_sketch``); the driver merges each side's
sketches, subtracts and decodes them (:mod:`dsha.core.sketch`); the differing rows are then read by keeping, on the
executors, the rows whose filter word and row digest (the Arrow engine's) are among the decoded ones; with
``key=``, the values of the rows paired by key are compared by their digests, computed there too. Everything between
those jobs (a larger sketch when the first does not decode, the join of per-digest counts beyond
``max_cells``, the check of the rows found against the decoded counts, the report) is the jar path's own code
(:func:`dsha.spark.diff.run_diff`).
"""
from __future__ import annotations

import functools
import zlib
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Sequence, Union, overload

from dsha.digests import on_arrow
from dsha.jarfree.engine import engine_for
from dsha.spark.diff import DEFAULT_CELLS, DEFAULT_MAX_CELLS, Diff, Passes, run_diff
from dsha.spark.diff import diff as jvm_diff
from dsha.spark.diff_names import WorkingNames
from dsha.spark.frames import session_of

if TYPE_CHECKING:
    import pyarrow as pa

    from dsha.arrow.diff import ArrowDiff
    from dsha.core.sketch import Sketch
    from dsha.spark.types import DataFrameLike

__all__ = ["diff", "sketch"]

_SKETCH_SCHEMA = "i int, s binary"


@overload
def diff(left: DataFrameLike, right: DataFrameLike, key: Union[str, Sequence[str], None] = None,
         columns: Union[str, Sequence[str], None] = None, *, column_digests: bool = False, cells: int = DEFAULT_CELLS,
         max_cells: int = DEFAULT_MAX_CELLS, engine: Optional[str] = None,
         exclude: Union[str, Sequence[str], None] = None) -> Diff: ...


@overload
def diff(left: Any, right: Any, key: Union[str, Sequence[str], None] = None,
         columns: Union[str, Sequence[str], None] = None, *, column_digests: bool = False, cells: int = DEFAULT_CELLS,
         max_cells: int = DEFAULT_MAX_CELLS, engine: Optional[str] = None,
         exclude: Union[str, Sequence[str], None] = None) -> Union[Diff, ArrowDiff]: ...


def diff(left: Any, right: Any, key: Union[str, Sequence[str], None] = None,
         columns: Union[str, Sequence[str], None] = None, *, column_digests: bool = False, cells: int = DEFAULT_CELLS,
         max_cells: int = DEFAULT_MAX_CELLS, engine: Optional[str] = None,
         exclude: Union[str, Sequence[str], None] = None) -> Union[Diff, ArrowDiff]:
    if on_arrow([left, right], engine):
        if key:
            raise TypeError(f"dsha.diff of a {type(left).__module__.split('.')[0]} {type(left).__name__} takes no "
                            "key= (pairing rows by key is Spark's): dsha.diff(spark.createDataFrame(left), "
                            "spark.createDataFrame(right), key=...); without key= the Arrow engine diffs the frames")
        from dsha.arrow.diff import diff as arrow_diff

        return arrow_diff(left, right, columns, column_digests=column_digests, cells=cells, max_cells=max_cells,
                          exclude=exclude)
    if engine_for(session_of(left, "dsha.diff"), engine) == "jvm":
        return jvm_diff(left, right, key, columns, column_digests=column_digests, cells=cells, max_cells=max_cells,
                        exclude=exclude)
    return run_diff(PYTHON, left, right, key, columns, column_digests, cells, max_cells, exclude)


diff.__doc__ = (jvm_diff.__doc__ or "") + """
    ``engine``: ``"jvm"`` (the jar), ``"python"`` (no jar: sketches and row digests by Python on the executors) or
    ``"auto"`` (default: the session setting ``spark.dsha.engine``, else the jar when the session has it), as in
    :func:`dsha.fingerprint`.

    Two pandas, pyarrow or polars frames (``engine`` not given or ``"auto"``): the Arrow engine's diff in this process
    (:func:`dsha.arrow.diff.diff`), an ``ArrowDiff``: the same counts, digests, ``explain`` and reports, its
    ``only_left``/``only_right`` pyarrow Tables; without ``key=`` (pairing by key is Spark's: a ``TypeError``)."""


# -- on the executors -----------------------------------------------------------------------------------------------

def _partition_sketch(side: int, cells: int, column_digests: bool,
                      batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """One partition's rows -> one row: its side and its sketch (zlib: most cells of a partition are empty)."""
    import pyarrow as pa

    from dsha.arrow.sketch import build
    from dsha.jarfree.digests import partition_reader

    reader = partition_reader(batches)
    if reader is None:
        return
    data = zlib.compress(build(reader.schema, reader, cells, column_digests).to_bytes(), 1)
    yield pa.RecordBatch.from_arrays([pa.array([side], pa.int32()), pa.array([data], pa.binary())], names=["i", "s"])


def _keep(digests: bytes, words: Optional[bytes], batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The rows whose row digest is one of ``digests`` (16 bytes each), hashed only when their filter word is one of
    ``words`` (4 bytes each, little-endian) when those are given."""
    import numpy as np

    from dsha.arrow.sketch import rows_in

    wanted = {digests[i:i + 16] for i in range(0, len(digests), 16)}
    filters = None if words is None else np.frombuffer(words, dtype="<u4").astype(np.uint64)
    for batch in batches:
        kept, _ = rows_in(batch, wanted, filters)
        if kept.num_rows:
            yield kept


def _with_digest(name: str, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Each row with its row digest (the Arrow engine's, of all its columns) as the column ``name``."""
    import pyarrow as pa

    import dsha.arrow

    for batch in batches:
        digests = dsha.arrow.logical_hash(batch).cast(pa.binary())
        yield pa.RecordBatch.from_arrays([*batch.columns, digests], names=[*batch.schema.names, name])


def _value_digest(batch: pa.RecordBatch, column: str) -> pa.Array:
    """The digest of each of ``column``'s values in ``batch`` (the Arrow engine's row digest of the one-column table,
    as the jar's ``logical_hash(column)``)."""
    import pyarrow as pa

    import dsha.arrow

    return dsha.arrow.logical_hash(pa.RecordBatch.from_arrays([batch.column(column)], names=[column])).cast(pa.binary())


def _with_value_digests(columns: List[str], names: List[str],
                        batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Each row with the digest of each of ``columns``' values as the column ``names[i]``."""
    import pyarrow as pa

    for batch in batches:
        digests = [_value_digest(batch, c) for c in columns]
        yield pa.RecordBatch.from_arrays([*batch.columns, *digests], names=[*batch.schema.names, *names])


def _values(columns: List[str], side: str, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Per row and column: the side's sign, the column's name and its value's digest (of the one-column table)."""
    import numpy as np
    import pyarrow as pa

    for batch in batches:
        n = batch.num_rows
        if not n:
            continue
        sign = np.where(np.asarray(batch.column(side).to_pylist(), dtype=object) == "left", 1, -1).astype(np.int32)
        parts = []
        for c in columns:
            parts.append(pa.RecordBatch.from_arrays([pa.array(sign), pa.array([c] * n, pa.string()),
                                                     _value_digest(batch, c)], names=["s", "c", "v"]))
        yield from parts


# -- on the driver --------------------------------------------------------------------------------------------------

def _side_sketch(empty: Sketch, parts: List[bytes]) -> Sketch:
    from dsha.core.sketch import Sketch
    from dsha.jarfree.digests import checked_part_schema

    total = empty
    for data in parts:
        part = Sketch.parse(zlib.decompress(data))
        checked_part_schema(part.schema, empty.schema, "diff")
        total = total.merge(part)
    return total


def _sketches(frames: Sequence[Any], cells: int, column_digests: bool) -> List[Sketch]:
    """The sketches of DataFrames (one job): each partition's by the Arrow engine, merged on the driver."""
    from dsha.arrow.sketch import SketchBuilder
    from dsha.jarfree.digests import collect_rows
    from dsha.jarfree.schema import arrow_schema, canonical_schema

    for df in frames:
        canonical_schema(df.schema)  # refuses what the transfer cannot carry, before any job
    jobs = [df.mapInArrow(functools.partial(_partition_sketch, i, cells, column_digests), _SKETCH_SCHEMA)
            for i, df in enumerate(frames)]
    parts: List[List[bytes]] = [[] for _ in frames]
    for row in collect_rows(functools.reduce(lambda x, y: x.unionByName(y), jobs)):
        parts[row["i"]].append(bytes(row["s"]))
    return [_side_sketch(SketchBuilder(arrow_schema(df.schema), cells, column_digests).sketch, p)
            for df, p in zip(frames, parts)]


def sketch(df: DataFrameLike, cells: int = DEFAULT_CELLS, column_digests: bool = False) -> bytes:
    """The sketch of ``df`` (SPEC.md §17.1 bytes) without the jar: what ``dsha_sketch(*)`` gives with
    ``spark.dsha.sketch.cells`` = ``cells`` and ``spark.dsha.sketch.columnDigests`` = ``column_digests``."""
    from dsha.core.sketch import valid_cells

    if not valid_cells(cells):
        raise ValueError(f"cells must be 2^i or 3·2^i cells up to 2^24, not {cells!r}")
    return _sketches([df], cells, column_digests)[0].to_bytes()


def _sketch_pass(left: Any, right: Any, cells: int, column_digests: bool) -> Dict[str, Any]:
    """Both sides sketched (one job), subtracted and decoded on the driver: what the jar's pass returns."""
    from dsha.core.sketch import decode_smallest

    a, b = _sketches([left, right], cells, column_digests)
    difference = a.minus(b)
    decoded = decode_smallest(difference)
    right_columns = {c.name: b.column_digest(c) for c in b.columns}
    out: Dict[str, Any] = {
        "decoded": decoded.success, "cells": difference.cells,
        "cells_used": decoded.cells if decoded.success else None,
        "estimate": None if decoded.success else decoded.estimate, "left_rows": a.rows, "right_rows": b.rows,
        "left_digest": a.digest, "right_digest": b.digest,
        "columns": [{"name": c.name, "equal": a.column_digest(c) == right_columns.get(c.name)} for c in a.columns]}
    entries = decoded.entries
    for side, sign in (("left", 1), ("right", -1)):
        mine = [(d, n * sign, phi) for d, (n, phi) in entries.items() if n * sign > 0]
        out[f"{side}_hex"] = b"".join(d for d, _, _ in mine).hex()
        out[f"{side}_excess"] = sum(n for _, n, _ in mine)
        out[f"{side}_words"] = ("".join(f"{phi:08x}" for _, _, phi in mine if phi is not None)
                                if decoded.filters_valid else None)
    out["distinct"] = len(entries)
    out["entries"] = (None if all(abs(n) == 1 for n, _ in entries.values())
                      else [{"digest": d, "count": n} for d, (n, _) in entries.items()])
    return out


def _in_digests(df: Any, digests: bytes, columns: List[Any], words: Optional[bytes] = None) -> Any:
    """The rows of ``df`` whose row digest is one of ``digests``, kept by Python on the executors."""
    return df.mapInArrow(functools.partial(_keep, digests, words), df.schema)


def _digest(df: Any, work: WorkingNames) -> Any:
    from dsha.dependencies import pyspark_types as T

    schema = T.StructType([*df.schema.fields, T.StructField(work.digest, T.BinaryType(), False)])
    return df.mapInArrow(functools.partial(_with_digest, work.digest), schema)


def _column_values(rows: Any, columns: List[str], work: WorkingNames) -> Any:
    return rows.mapInArrow(functools.partial(_values, list(columns), work.side), "s int, c string, v binary")


def _value_digests(df: Any, columns: List[str], names: List[str]) -> Any:
    from dsha.dependencies import pyspark_types as T

    schema = T.StructType([*df.schema.fields, *[T.StructField(n, T.BinaryType(), False) for n in names]])
    return df.mapInArrow(functools.partial(_with_value_digests, list(columns), list(names)), schema)


PYTHON = Passes(sketch=_sketch_pass, in_digests=_in_digests, digest=_digest, column_values=_column_values,
                value_digests=_value_digests, needs_jar=False)
