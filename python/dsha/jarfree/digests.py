"""Digests of a DataFrame by Python on the executors: each partition's Arrow batches hashed into a state by the Arrow
engine (``mapInArrow``, classic and Spark Connect, Spark 3.5+), the states merged on the driver (SPEC.md §11)."""
from __future__ import annotations

import hashlib
import itertools
import re
from typing import TYPE_CHECKING, Any, Iterator, List, Sequence, Union

import pyarrow as pa

import dsha.arrow
from dsha.core.algorithms import DEFAULT as ALGORITHM
from dsha.core.fingerprint import Comparison, Fingerprint
from dsha.core.states import DigestState, parse
from dsha.errors import MissingDependencyError, StateError
from dsha.jarfree.schema import canonical_schema

if TYPE_CHECKING:
    from dsha.spark.types import DataFrameLike

__all__ = ["equal", "fingerprint", "state"]

Columns = Union[str, Sequence[str], None]
_STATE_COLUMN = "state"


def partition_state(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """On an executor: one partition's rows (Arrow batches) -> one row holding their state (none for no rows)."""
    first = next(batches, None)
    if first is None:
        return
    reader = pa.RecordBatchReader.from_batches(first.schema, itertools.chain([first], batches))
    yield pa.RecordBatch.from_arrays([pa.array([dsha.arrow.state(reader)], pa.binary())], names=[_STATE_COLUMN])


def _selected(df: DataFrameLike, columns: Columns) -> DataFrameLike:
    """``df`` reduced to the named columns, each named as SPEC.md §2.1 names a column reference (the input's name;
    a nested field by its last name). Expressions are not arguments here: alias them in a select first."""
    if columns is None:
        return df
    names = [columns] if isinstance(columns, str) else list(columns)
    picked: List[Any] = []
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"the jar-free path takes column names, not {type(name).__name__}: select and alias an "
                            f"expression first (df.select(expr.alias('name'))) and pass its name")
        exact = [c for c in df.columns if c == name]
        folded = [c for c in df.columns if c.lower() == name.lower()]
        if exact or len(folded) == 1:  # Spark's default resolution is case-insensitive: the input's own name
            picked.append(df[exact[0] if exact else folded[0]])
        else:
            picked.append(name)  # a nested field (s.x), or a name Spark will report as missing
    return df.select(*picked)


def _collect(df: DataFrameLike) -> List[Any]:
    """The rows; an executor whose Python lacks what the path needs is named as such (not as a task's traceback)."""
    try:
        return df.collect()
    except Exception as e:
        missing = re.search(r"No module named '(dsha|pyarrow|numpy)[.']", str(e))
        if missing is None:
            raise
        raise MissingDependencyError(
            f"the executors' Python has no {missing.group(1)}: the jar-free path runs dsha there. Install dsha with "
            f"its arrow extra where the executors run (a cluster or notebook library), or point PYSPARK_PYTHON at "
            f"an interpreter that has it") from None


def _state(df: DataFrameLike, columns: Columns) -> DigestState:
    chosen = _selected(df, columns)
    schema = canonical_schema(chosen.schema)  # refuses what the transfer cannot carry, before any job
    schema_digest = hashlib.sha256(schema.encode("utf-8", "surrogatepass")).digest()
    total = DigestState(ALGORITHM, schema, schema_digest, 0, 0)
    for row in _collect(chosen.mapInArrow(partition_state, f"{_STATE_COLUMN} binary")):
        part = parse(bytes(row[_STATE_COLUMN]))
        if part.schema != schema:  # the executors' Arrow types must give the driver's canonical schema
            raise StateError(f"a partition's rows arrived as {part.schema}, not {schema} as the Spark schema says; "
                             f"the jar-free path cannot hash this DataFrame exactly")
        total = total.merge(part)
    return total


def state(df: DataFrameLike, columns: Columns = None) -> bytes:
    """The dsha-v1 state (SPEC.md §11) of ``df``'s rows over ``columns`` (default all), without the jar."""
    return _state(df, columns).to_bytes()


def fingerprint(df: DataFrameLike, columns: Columns = None) -> Fingerprint:
    """The dsha-v1 fingerprint of ``df`` (SPEC.md §6), without the jar: the jar's fields and values."""
    return Fingerprint.from_state(state(df, columns))


def equal(left: DataFrameLike, right: DataFrameLike) -> Comparison:
    """Both sides' fingerprints, without the jar (one job per side)."""
    return Comparison(fingerprint(left), fingerprint(right))
