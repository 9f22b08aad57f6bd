"""Parquet INT96 timestamps as Spark reads them (SPEC.md Appendix A, "Parquet").

An INT96 value is a Julian day (int32) and nanoseconds of that day (int64). Spark reads it as
``(day - 2440588) * 86_400_000_000 + nanos / 1000`` in Java's wrapping ``long`` arithmetic (division towards zero)
and, writing ``micros``, stores the quotient and remainder of ``micros + 2440588 days`` (also wrapping): so before
Julian day 0 (4714 BC) and within 2440588 days of ``Long.MaxValue`` its day and nanoseconds are negative. Arrow reads
both as unsigned, which shifts those values by a constant (modulo 2^64) into ranges where other values read
exactly. pyarrow does not give the raw twelve bytes, so the Arrow engine tells the two apart as follows: a negative
day read as unsigned is beyond 2^31, which a second reading in seconds (no wrapping there) shows as more than
``MAX_SECONDS``; a negative nanoseconds of day 0 lands below ``EXACT_LOW``. A file with either is refused.
"""
from __future__ import annotations

from typing import Any, Iterator, List, Optional, Tuple, Union

import pyarrow as pa
import pyarrow.compute as pc

from dsha.errors import UnsupportedTypeError

JULIAN_DAY_OF_EPOCH = 2_440_588
MICROS_PER_DAY = 86_400_000_000
# Arrow's reading of day 0 with negative nanoseconds is Spark's + floor(2^64/1000) µs: below EXACT_LOW (and values
# just below it are refused with them); above EXACT_HIGH Spark's day is negative.
EXACT_LOW = -JULIAN_DAY_OF_EPOCH * MICROS_PER_DAY + (1 << 64) // 1000   # -192420059126290449 µs, year -4128
EXACT_HIGH = (1 << 63) - 1 - JULIAN_DAY_OF_EPOCH * MICROS_PER_DAY       # 9012505233654775807 µs, year 287,566
# In seconds, Arrow computes (unsigned day - 2440588) * 86400 + unsigned nanoseconds // 10^9 without wrapping: at
# most this for a day Spark writes as non-negative, at least (2^31 - 2440588) * 86400 for a negative one.
MAX_SECONDS = ((1 << 63) - 1) // 1_000_000 + 86_400

Step = Union[int, str]  # a struct field's index, "[]" (list element), "key" or "value" (map)
Leaf = Tuple[str, Tuple[Step, ...], str]  # (top-level column, steps to the leaf, the leaf's path for messages)


def int96_leaves(schema: pa.Schema, parquet_schema: Any) -> Optional[List[Leaf]]:
    """The timestamp leaves of ``schema`` that the file stores as INT96 (Parquet's leaf columns are the Arrow
    schema's leaves in depth-first order); None when the leaves do not line up (defensively: nothing is changed)."""
    kinds = [parquet_schema.column(i).physical_type for i in range(len(parquet_schema))]
    if "INT96" not in kinds:
        return []
    leaves = iter(kinds)
    found: List[Leaf] = []

    def walk(t: pa.DataType, column: str, steps: Tuple[Step, ...], path: str) -> None:
        if pa.types.is_struct(t):
            for i in range(t.num_fields):
                walk(t.field(i).type, column, (*steps, i), f"{path}.{t.field(i).name}")
        elif pa.types.is_map(t):
            walk(t.key_type, column, (*steps, "key"), path + ".key")
            walk(t.item_type, column, (*steps, "value"), path + ".value")
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            walk(t.value_type, column, (*steps, "[]"), path + "[]")
        elif next(leaves, None) == "INT96" and pa.types.is_timestamp(t):
            found.append((column, steps, path))

    for f in schema:
        walk(f.type, f.name, (), f.name)
    return found if next(leaves, None) is None else None


def as_instants(schema: pa.Schema, parquet_schema: Any) -> pa.Schema:
    """The Arrow schema with every timestamp stored as Parquet INT96 made a UTC instant (``timestamp[us, UTC]``):
    Spark reads INT96 as TIMESTAMP (an instant), never TIMESTAMP_NTZ; Arrow reads it without a time zone. Returns
    ``schema`` itself when nothing is INT96 (or the leaves do not line up)."""
    leaves = int96_leaves(schema, parquet_schema)
    if not leaves:
        return schema
    at = {(column, steps) for column, steps, _ in leaves}

    def fix(t: pa.DataType, column: str, steps: Tuple[Step, ...]) -> pa.DataType:
        if pa.types.is_struct(t):
            return pa.struct([t.field(i).with_type(fix(t.field(i).type, column, (*steps, i)))
                              for i in range(t.num_fields)])
        if pa.types.is_map(t):
            return pa.map_(t.key_field.with_type(fix(t.key_type, column, (*steps, "key"))),
                           t.item_field.with_type(fix(t.item_type, column, (*steps, "value"))))
        if pa.types.is_list(t):
            return pa.list_(t.value_field.with_type(fix(t.value_type, column, (*steps, "[]"))))
        if pa.types.is_large_list(t):
            return pa.large_list(t.value_field.with_type(fix(t.value_type, column, (*steps, "[]"))))
        return pa.timestamp("us", tz="UTC") if (column, steps) in at else t

    return pa.schema([f.with_type(fix(f.type, f.name, ())) for f in schema], metadata=schema.metadata)


def _leaf_values(arr: pa.Array, steps: Tuple[Step, ...]) -> pa.Array:
    for s in steps:
        if s == "key":
            arr = arr.keys
        elif s == "value":
            arr = arr.items
        elif s == "[]":
            arr = arr.flatten()
        else:
            arr = arr.field(s)
    return arr


def _bounds(batch: pa.RecordBatch, leaves: List[Leaf], unit: str) -> Iterator[Tuple[str, int, int]]:
    """(path, min, max) of the values of each INT96 leaf in ``batch`` read in ``unit``, as integers."""
    names = batch.schema.names
    for column, steps, path in leaves:
        if column not in names:
            continue
        values = _leaf_values(batch.column(names.index(column)), steps)
        if values.null_count == len(values) or values.type.unit != unit:
            continue  # (a Dataset of the caller's, read in nanoseconds: its own reading, not checked here)
        bounds = pc.min_max(values.cast(pa.int64()))
        yield path, bounds["min"].as_py(), bounds["max"].as_py()


def _refuse(path: str, where: str, what: str) -> UnsupportedTypeError:
    return UnsupportedTypeError(
        f"column {path}: {where} stores an INT96 timestamp {what}, which Arrow does not read as Spark does "
        f"(the Arrow engine hashes INT96 between {EXACT_LOW} and {EXACT_HIGH} µs, SPEC.md Appendix A); hash it "
        f"with --engine spark, or write it as TIMESTAMP_MICROS")


def check_exact(batch: pa.RecordBatch, leaves: List[Leaf], where: str) -> pa.RecordBatch:
    """``batch`` itself, once every INT96 value in it (read as microseconds) is in [EXACT_LOW, EXACT_HIGH]."""
    for path, low, high in _bounds(batch, leaves, "us"):
        if low < EXACT_LOW or high > EXACT_HIGH:
            raise _refuse(path, where, f"that Arrow reads as {low if low < EXACT_LOW else high} µs")
    return batch


def check_days(file: str, filesystem: Any = None) -> List[Leaf]:
    """The file's INT96 leaves, once a reading of them in seconds shows no negative Julian day (see above)."""
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(file, coerce_int96_timestamp_unit="s", filesystem=filesystem)
    leaves = int96_leaves(pf.schema_arrow, pf.schema) or []
    if leaves:
        for b in pf.iter_batches(columns=sorted({column for column, _, _ in leaves})):
            for path, _, high in _bounds(b, leaves, "s"):
                if high > MAX_SECONDS:
                    raise _refuse(path, file, "before Julian day 0 (4714 BC) or near Long.MaxValue µs")
    return leaves


def checked(batches: Iterator[pa.RecordBatch], leaves: List[Leaf], where: str) -> Iterator[pa.RecordBatch]:
    for b in batches:
        yield check_exact(b, leaves, where) if leaves else b


def dataset_leaves(dataset: Any) -> List[Leaf]:
    """The INT96 leaves of any of a Parquet dataset's files (each file checked by :func:`check_days`): its batches
    do not say which file they come from, so a column stored as INT96 in one file is checked in all."""
    out: List[Leaf] = []
    for f in dataset.files:
        out.extend(leaf for leaf in check_days(f, dataset.filesystem) if leaf not in out)
    return out


__all__ = ["EXACT_HIGH", "EXACT_LOW", "MAX_SECONDS", "as_instants", "check_days", "check_exact", "checked",
           "dataset_leaves", "int96_leaves"]
