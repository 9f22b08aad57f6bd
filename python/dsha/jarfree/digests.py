"""Digests of a DataFrame by Python on the executors: each partition's Arrow batches hashed into a state by the Arrow
engine (``mapInArrow``, classic and Spark Connect, Spark 3.5+), the states merged on the driver (SPEC.md §11)."""
from __future__ import annotations

import hashlib
import itertools
import re
from typing import TYPE_CHECKING, Any, Callable, Iterator, List, Optional, Sequence, Tuple, Union

import pyarrow as pa

import dsha.arrow
from dsha.core.algorithms import DEFAULT as ALGORITHM
from dsha.core.algorithms import KEYED, algorithm_id
from dsha.core.fingerprint import Comparison, Fingerprint
from dsha.core.states import DigestState, parse
from dsha.errors import MissingDependencyError, StateError
from dsha.jarfree.keys import Secret, executor_secret, read_key
from dsha.jarfree.schema import canonical_schema

if TYPE_CHECKING:
    from dsha.spark.types import DataFrameLike

__all__ = ["checked_part_schema", "collect_rows", "equal", "fingerprint", "partition_reader", "partition_states",
           "state"]

Columns = Union[str, Sequence[str], None]
_STATE_COLUMN = "state"


def partition_reader(batches: Iterator[pa.RecordBatch]) -> Optional[pa.RecordBatchReader]:
    """On an executor: one partition's rows (Arrow batches, as ``mapInArrow`` hands them) as one reader, or None when
    the partition has none (no batch, so no schema)."""
    first = next(batches, None)
    if first is None:
        return None
    return pa.RecordBatchReader.from_batches(first.schema, itertools.chain([first], batches))


def checked_part_schema(part: str, schema: str, doing: str = "hash") -> None:
    """Raises unless a partition's canonical schema ``part`` is the driver's ``schema``: the executors' Arrow types
    must give the canonical schema the Spark schema gives (``doing``: what the path cannot then do exactly)."""
    if part != schema:
        raise StateError(f"a partition's rows arrived as {part}, not {schema} as the Spark schema says; the jar-free "
                         f"path cannot {doing} this DataFrame exactly")


def partition_state(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """On an executor: one partition's rows (Arrow batches) -> one row holding their state (none for no rows)."""
    reader = partition_reader(batches)
    if reader is None:
        return
    yield pa.RecordBatch.from_arrays([pa.array([dsha.arrow.state(reader)], pa.binary())], names=[_STATE_COLUMN])


def _tamper_evident(algorithm: str, secret: Optional[Secret]) -> Callable[[Iterator[pa.RecordBatch]],
                                                                          Iterator[pa.RecordBatch]]:
    """``partition_state`` of a tamper-evident algorithm: what the executors need of the key (``keys``) travels in
    this function's closure, pickled with it, held by a ``Secret`` that prints as ``<key>``."""

    def partition_state(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from dsha.arrow._secure import secure_state

        reader = partition_reader(batches)
        if reader is None:
            return
        state = secure_state(reader, None, algorithm, None if secret is None else secret.reveal(), seeded=True)
        yield pa.RecordBatch.from_arrays([pa.array([state.to_bytes()], pa.binary())], names=[_STATE_COLUMN])

    return partition_state


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


# A worker's error when its Python lacks a module of the path (the import's, or the Arrow engine's own refusal of AES)
_MISSING = re.compile(r"No module named '(dsha|pyarrow|numpy|cryptography)[.']|need AES from the cryptography package")


def collect_rows(df: DataFrameLike) -> List[Any]:
    """The rows; an executor whose Python lacks what the path needs is named as such (not as a task's traceback)."""
    try:
        return df.collect()
    except Exception as e:
        missing = _MISSING.search(str(e))
        if missing is None:
            raise
        name = missing.group(1) or "cryptography"
        why = ("dsha-keyed-v2, dsha-secure-v1 and dsha-secure-v2 need its AES there" if name == "cryptography"
               else "the jar-free path runs dsha there")
        raise MissingDependencyError(
            f"the executors' Python has no {name}: {why}. Install dsha[arrow] there (dsha with its arrow extra, as a "
            f"cluster or notebook library), or point PYSPARK_PYTHON at an interpreter that has it") from None


def partition_states(chosen: DataFrameLike, schema_digest: bytes, algorithm: str = ALGORITHM,
                     key: Optional[Secret] = None) -> DataFrameLike:
    """The DataFrame of one state per partition of ``chosen`` (what ``mapInArrow`` runs; its plan names the function,
    ``partition_state``, and shows nothing it holds)."""
    task: Any = partition_state
    if algorithm != ALGORITHM:
        task = _tamper_evident(algorithm, None if key is None else executor_secret(algorithm, key, schema_digest))
    return chosen.mapInArrow(task, f"{_STATE_COLUMN} binary")


def _state(df: DataFrameLike, columns: Columns, algorithm: str = ALGORITHM, key: Optional[Secret] = None
           ) -> DigestState:
    chosen = _selected(df, columns)
    schema = canonical_schema(chosen.schema)  # refuses what the transfer cannot carry, before any job
    schema_digest = hashlib.sha256(schema.encode("utf-8", "surrogatepass")).digest()
    total = DigestState(algorithm, schema, schema_digest, 0, 0)
    for row in collect_rows(partition_states(chosen, schema_digest, algorithm, key)):
        part = parse(bytes(row[_STATE_COLUMN]))
        checked_part_schema(part.schema, schema)
        total = total.merge(part)
    return total


def _algorithm_and_key(df: DataFrameLike, algorithm: Optional[str], key: Any) -> Tuple[str, Optional[Secret]]:
    """The algorithm id and the key's bytes of ``algorithm=``/``key=`` (SPEC.md §16), as the jar's path reads them."""
    if key is None:
        return algorithm_id(algorithm, None), None
    secret, named = read_key(df.sparkSession, key)
    if named is not None and named not in KEYED:
        raise ValueError(f"the key reference names the algorithm {named!r}: conf:NAME#ALGORITHM takes an id, "
                         f"{' or '.join(KEYED)}")
    if algorithm is not None and named is not None and algorithm_id(algorithm, key) != algorithm_id(named, key):
        raise ValueError(f"the key reference names the algorithm {named!r}, and algorithm= asks for {algorithm!r}")
    return algorithm_id(algorithm if algorithm is not None else named, secret), secret


def state(df: DataFrameLike, columns: Columns = None, algorithm: Optional[str] = None, key: Any = None) -> bytes:
    """The state (SPEC.md §11) of ``df``'s rows over ``columns`` (default all), without the jar; ``algorithm``/``key``
    as :func:`dsha.fingerprint` takes them (``keys``: where the key travels)."""
    return _state(df, columns, *_algorithm_and_key(df, algorithm, key)).to_bytes()


def fingerprint(df: DataFrameLike, columns: Columns = None, algorithm: Optional[str] = None,
                key: Any = None) -> Fingerprint:
    """The fingerprint of ``df`` (SPEC.md §6), without the jar: the jar's fields and values."""
    return Fingerprint.from_state(state(df, columns, algorithm, key))


def equal(left: DataFrameLike, right: DataFrameLike, algorithm: Optional[str] = None,
          key: Any = None) -> Comparison:
    """Both sides' fingerprints, without the jar (one job per side; the key read once)."""
    chosen, secret = _algorithm_and_key(left, algorithm, key)
    return Comparison(Fingerprint.from_state(_state(left, None, chosen, secret).to_bytes()),
                      Fingerprint.from_state(_state(right, None, chosen, secret).to_bytes()))
