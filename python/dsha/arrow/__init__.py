"""dsha digests of Arrow data in pure Python (numpy + pyarrow): no Spark, no Java.

>>> import dsha.arrow
>>> dsha.arrow.fingerprint(table)            # pyarrow Table/RecordBatch/Reader/Dataset, pandas, polars
>>> dsha.arrow.fingerprint("data/", format="parquet")   # a file or a directory of files, streamed
>>> dsha.arrow.state(table, columns=["id", "name"])      # SPEC.md §11 state bytes, mergeable with dsha.merge

The digests are byte-identical to Spark's ``dsha``/``dsha_fingerprint``/``dsha_state``/``logical_hash`` (SPEC.md)
for the Arrow types of SPEC.md Appendix A: the type Spark gives the same data when it reads the Parquet file pyarrow
writes from it.

Inputs: a pyarrow ``Table``, ``RecordBatch``, ``RecordBatchReader`` or ``pyarrow.dataset.Dataset``; a pandas
DataFrame (its index is not a column: ``Table.from_pandas(df, preserve_index=False)``); a polars DataFrame, or
LazyFrame (streamed with ``collect_batches`` where polars has it); any object with ``__arrow_c_stream__``; or a path
(``str``/``os.PathLike``) to a file or directory. Everything is read in batches of ``batch_size`` rows (default
65536): dsha's own working memory is bounded by the batch size, not the input size (the file readers' buffers
are pyarrow's, e.g. a Parquet row group).

Tamper-evident digests (SPEC.md §16): ``algorithm="secure"`` (dsha-secure-v1) or ``"secure-v2"`` (dsha-secure-v2,
§16.7: AES under two keys fixed per table, so the blocks of a thousand rows go through one AES call), or ``key=`` (bytes
of at least 16, or hex/base64 text) with ``algorithm="keyed"`` (the default with a key: dsha-keyed-v1) or
``"keyed-v2"``; the same digests and states as the jar's (AES from the ``cryptography`` package, in the arrow extra).
Each runs a Python loop per row (a hash of its bytes; dsha-secure-v1 also an AES key per row), so expect from tens of
thousands (dsha-secure-v1) to hundreds of thousands (dsha-secure-v2, dsha-keyed-v1) of rows a second per core rather
than dsha-v1's millions.

Paths: the format comes from ``format=`` (parquet, orc, csv, json, ipc/arrow/feather) or else from the file
extension (for a directory, from its first data file). In a directory, files and directories whose names start with
``_`` or ``.`` are ignored, as Spark does. Hive-style partition directories (``k=v``) are *not* turned into columns
unless ``partitioning="hive"`` is passed (Spark would add them as columns: pass ``partitioning="hive"`` to match a
Spark digest of a partitioned table; note that the partition column types are then inferred by pyarrow, which may
differ from Spark's inference).
"""
from __future__ import annotations

import hashlib
import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Deque, Optional, Sequence, Tuple

import numpy as np
import pyarrow as pa

from dsha.arrow._encode import encode_columns, hash_rows
from dsha.arrow._murmur import digests_to_bytes, prefix_state, sum128
from dsha.arrow._sources import DEFAULT_BATCH_SIZE, _select, chosen_columns, column_names, to_batches
from dsha.arrow._types import schema_string
from dsha.core.algorithms import DEFAULT as ALGORITHM
from dsha.core.algorithms import algorithm_id
from dsha.core.fingerprint import Fingerprint
from dsha.core.states import DigestState
from dsha.errors import UnsupportedTypeError


def canonical_schema(arrow_schema: pa.Schema, columns: Optional[Sequence[str]] = None) -> str:
    """The canonical schema (SPEC.md §2) of the given columns (default: all) of an Arrow schema (or of anything
    with an Arrow ``.schema``, such as a Table, RecordBatch, RecordBatchReader or Dataset)."""
    if not isinstance(arrow_schema, pa.Schema) and isinstance(getattr(arrow_schema, "schema", None), pa.Schema):
        arrow_schema = arrow_schema.schema
    if columns is not None:
        if isinstance(columns, str):
            columns = [columns]
        cols = _select(arrow_schema, columns)
        arrow_schema = pa.schema([arrow_schema.field(c) for c in cols])
    return schema_string(arrow_schema)


class _Hasher:
    def __init__(self, schema: pa.Schema):
        self.schema = schema
        self.text = schema_string(schema)
        self.schema_digest = hashlib.sha256(self.text.encode("utf-8", "surrogatepass")).digest()
        self.h0 = prefix_state(self.schema_digest)
        self._checked = {self._key(schema)}

    @staticmethod
    def _key(schema: pa.Schema) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
        return tuple(schema.names), tuple(str(t) for t in schema.types)  # (pa.Schema with metadata is unhashable)

    def _check(self, batch_schema: pa.Schema) -> None:
        # a batch whose Arrow types differ from the declared schema (e.g. dictionary-encoded in one file) must still
        # have the same canonical schema, or its rows would be hashed under another type
        key = self._key(batch_schema)
        if key not in self._checked:
            text = schema_string(batch_schema)
            if text != self.text:
                raise ValueError(f"a batch of the input has the canonical schema {text}, not {self.text} "
                                 f"as the input's schema says")
            self._checked.add(key)

    def row_hashes(self, batch: pa.RecordBatch) -> Tuple[np.ndarray, np.ndarray]:
        n = batch.num_rows
        if n == 0:
            return np.zeros(0, np.uint64), np.zeros(0, np.uint64)
        self._check(batch.schema)
        encs = encode_columns([batch.column(i) for i in range(batch.num_columns)], batch.schema.names)
        return hash_rows(encs, n, self.h0, 32)


def _threads() -> int:
    """Batches hashed at once: numpy and Arrow release the GIL in their loops, so threads use the cores."""
    return max(1, min(os.cpu_count() or 1, 8))


def _state(obj: Any, columns: Optional[Sequence[str]], format: Optional[str], batch_size: Optional[int],
           partitioning: Optional[str], progress: Optional[Callable[[int], None]] = None,
           algorithm: Optional[str] = None, key: Any = None, exclude: Any = None) -> DigestState:
    columns = chosen_columns(obj, columns, exclude, format, partitioning)
    chosen = algorithm_id(algorithm, key)
    if chosen != ALGORITHM:  # the tamper-evident ones (SPEC.md §16): dsha.arrow._secure
        from dsha.arrow._secure import secure_state

        return secure_state(obj, columns, chosen, key, format=format, batch_size=batch_size,
                            partitioning=partitioning, progress=progress)
    schema, batches = to_batches(obj, columns, format=format, batch_size=batch_size, partitioning=partitioning)
    h = _Hasher(schema)

    def count_and_sum(batch: pa.RecordBatch) -> Tuple[int, int]:
        h1, h2 = h.row_hashes(batch)
        return len(h1), sum128(h1, h2)

    rows, total, threads = 0, 0, _threads()

    def add(result: Tuple[int, int]) -> None:
        nonlocal rows, total
        rows, total = rows + result[0], (total + result[1]) % (1 << 128)
        if progress is not None:
            progress(rows)

    with ThreadPoolExecutor(threads, thread_name_prefix="dsha-arrow") as pool:
        pending: Deque[Any] = deque()  # at most `threads` batches in flight: memory stays a few batches
        for b in batches:
            pending.append(pool.submit(count_and_sum, b))
            while len(pending) > threads or (pending and pending[0].done()):
                add(pending.popleft().result())
        for f in pending:
            add(f.result())
    return DigestState(ALGORITHM, h.text, h.schema_digest, rows, total)


def state(obj: Any, columns: Optional[Sequence[str]] = None, *, format: Optional[str] = None,
          batch_size: Optional[int] = None, partitioning: Optional[str] = None,
          progress: Optional[Callable[[int], None]] = None, algorithm: Optional[str] = None,
          key: Any = None, exclude: Optional[Sequence[str]] = None) -> bytes:
    """The digest state (SPEC.md §11) of ``obj``'s rows over the given columns (default all). ``progress`` is
    called with the number of rows hashed so far, after each batch. ``algorithm``/``key``: as ``dsha.fingerprint``
    takes them (SPEC.md §16; a keyed state merges and finalises without its key). ``exclude``: columns left out (a
    name or a list), as ``dsha.fingerprint(df, exclude=...)`` leaves them out: the state of the input without them
    (with ``columns``, of those columns without them); an excluded name the input does not have is a ``ValueError``
    with the closest names."""
    return _state(obj, columns, format, batch_size, partitioning, progress, algorithm, key, exclude).to_bytes()


def fingerprint(obj: Any, columns: Optional[Sequence[str]] = None, *, format: Optional[str] = None,
                batch_size: Optional[int] = None, partitioning: Optional[str] = None,
                progress: Optional[Callable[[int], None]] = None, algorithm: Optional[str] = None,
                key: Any = None, exclude: Optional[Sequence[str]] = None) -> Fingerprint:
    """The fingerprint (SPEC.md §6): the same fields and values as Spark's ``dsha_fingerprint``. ``progress`` is
    called with the number of rows hashed so far, after each batch. ``algorithm``/``key``/``exclude``: as in
    :func:`state` (``fingerprint(t, exclude=["_ingested_at"])`` is
    ``fingerprint(t.drop_columns(["_ingested_at"]))``)."""
    return Fingerprint.from_state(state(obj, columns, format=format, batch_size=batch_size,
                                        partitioning=partitioning, progress=progress, algorithm=algorithm, key=key,
                                        exclude=exclude))


def logical_hash(obj: Any, columns: Optional[Sequence[str]] = None, *, format: Optional[str] = None,
                 batch_size: Optional[int] = None, partitioning: Optional[str] = None) -> pa.Array:
    """Per-row digests (SPEC.md §4.2) as a fixed_size_binary(16) array, in row order (in-memory inputs)."""
    schema, batches = to_batches(obj, columns, format=format, batch_size=batch_size, partitioning=partitioning)
    h = _Hasher(schema)
    parts = []
    for b in batches:
        h1, h2 = h.row_hashes(b)
        parts.append(digests_to_bytes(h1, h2).reshape(-1))
    data = np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint8)
    return pa.FixedSizeBinaryArray.from_buffers(pa.binary(16), len(data) // 16, [None, pa.py_buffer(data.tobytes())])


__all__ = [
    "DEFAULT_BATCH_SIZE",
    "UnsupportedTypeError",
    "canonical_schema",
    "column_names",
    "fingerprint",
    "logical_hash",
    "state",
]
