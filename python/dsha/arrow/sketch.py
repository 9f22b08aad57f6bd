"""Sketches (SPEC.md §17) of Arrow data, and the rows of Arrow data whose digests a decoded difference names.

A batch's rows are hashed as :mod:`dsha.arrow` hashes them (the row digests, SPEC.md §4.2), their filter words
(SPEC.md §17.2.1) are read from the top-level values (fixed-width values and lengths), and both are added to the
cells of :class:`dsha.core.sketch.Sketch`. The same builder runs on a local file (``dsha diff`` on the Arrow engine)
and on the executors (``mapInArrow``, the jar-free ``dsha.diff``).
"""
from __future__ import annotations

import hashlib
from typing import Any, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.types as pat

from dsha.arrow._encode import _fixed_value, _valid, encode, hash_rows, plain
from dsha.arrow._murmur import digests_to_bytes, prefix_state, sum128
from dsha.arrow._sources import to_batches
from dsha.arrow._types import canonical_order, schema_string
from dsha.core.sketch import G, Sketch, mix, mix_array

__all__ = ["SketchBuilder", "digests_and_words", "filter_words", "rows_in", "sketch"]

NULL_WORD = np.uint64(0x6A09E667F3BCC908)
_SIGNED = {1: "<i1", 2: "<i2", 4: "<i4", 8: "<i8"}


def _column_word(arr: pa.Array, path: str) -> np.ndarray:
    """``v_i`` of every value of one top-level column (SPEC.md §17.2.1)."""
    arr = plain(arr)
    t, n = arr.type, len(arr)
    if pat.is_null(t):
        return np.full(n, NULL_WORD, dtype=np.uint64)
    valid = _valid(arr)
    if pat.is_string(t) or pat.is_binary(t) or pat.is_large_string(t) or pat.is_large_binary(t):
        dt = "<i8" if (pat.is_large_string(t) or pat.is_large_binary(t)) else "<i4"
        off = np.frombuffer(arr.buffers()[1], dtype=dt, count=arr.offset + n + 1)[arr.offset:] if n else np.zeros(1)
        v = np.diff(off.astype(np.int64)).astype(np.uint64)
    elif pat.is_fixed_size_binary(t):
        v = np.full(n, t.byte_width, dtype=np.uint64)
    else:
        m = _fixed_value(arr, valid, path)
        if m is not None and m.shape[1] in _SIGNED:
            v = np.ascontiguousarray(m).view(_SIGNED[m.shape[1]]).reshape(n).astype(np.int64).view(np.uint64)
        else:  # decimal(p > 18), intervals, arrays, maps, structs
            v = np.ones(n, dtype=np.uint64)
    if valid is not None:
        v = np.where(valid, v, NULL_WORD)
    return v


def _coefficient(i: int) -> np.uint64:
    """``K_i = mix((i + 1)·G) | 1``."""
    out: np.uint64 = np.uint64(mix(((i + 1) * G) & ((1 << 64) - 1)) | 1)
    return out


def filter_words(batch: pa.RecordBatch) -> np.ndarray:
    """Each row's filter word φ (a u32, as u64) over the batch's columns in canonical order (SPEC.md §17.2.1)."""
    names = batch.schema.names
    total = np.zeros(batch.num_rows, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for i, c in enumerate(canonical_order(names, "columns")):
            total += _coefficient(i) * _column_word(batch.column(c), names[c])
    out: np.ndarray = mix_array(total) >> np.uint64(32)
    return out


class SketchBuilder:
    """Adds batches of one schema to a sketch of ``cells`` cells (with each column's digest when ``columns``)."""

    def __init__(self, schema: pa.Schema, cells: int, columns: bool = False):
        self.text = schema_string(schema)
        self.h0 = prefix_state(hashlib.sha256(self.text.encode("utf-8", "surrogatepass")).digest())
        names = schema.names
        self.order = canonical_order(names, "columns")
        self.column_h0: List[Tuple[int, int]] = []
        pairs: List[Tuple[str, bytes]] = []
        for c in self.order:
            one = hashlib.sha256(schema_string(pa.schema([schema.field(c)])).encode("utf-8", "surrogatepass"))
            pairs.append((names[c], one.digest()))
            self.column_h0.append(prefix_state(one.digest()))
        self.sketch = Sketch.empty(self.text, cells, pairs, with_columns=columns)

    def add(self, batch: pa.RecordBatch) -> None:
        n = batch.num_rows
        if n == 0:
            return
        text = schema_string(batch.schema)
        if text != self.text:
            raise ValueError(f"a batch of the input has the canonical schema {text}, not {self.text}")
        names = batch.schema.names
        encs = [encode(batch.column(c), names[c]) for c in self.order]
        h1, h2 = hash_rows(encs, n, self.h0, 32)
        s = self.sketch
        s.rows += n
        s.sum = (s.sum + sum128(h1, h2)) % (1 << 128)
        s.add_digests(h1, h2, filter_words(batch))
        for col, enc, h0 in zip(s.columns, encs, self.column_h0):
            c1, c2 = hash_rows([enc], n, h0, 32)
            col.sum = (col.sum + sum128(c1, c2)) % (1 << 128)


def sketch(obj: Any, columns: Optional[Sequence[str]] = None, *, cells: int = 49152, column_digests: bool = False,
           format: Optional[str] = None, batch_size: Optional[int] = None,
           partitioning: Optional[str] = None) -> bytes:
    """The sketch (SPEC.md §17.1 bytes) of ``obj``'s rows over ``columns``: what Spark's ``dsha_sketch`` gives for
    the same rows with ``spark.dsha.sketch.cells`` = ``cells`` (and ``columnDigests`` = ``column_digests``)."""
    schema, batches = to_batches(obj, columns, format=format, batch_size=batch_size, partitioning=partitioning)
    return build(schema, batches, cells, column_digests).to_bytes()


def build(schema: pa.Schema, batches: Iterable[pa.RecordBatch], cells: int, column_digests: bool = False) -> Sketch:
    builder = SketchBuilder(schema, cells, column_digests)
    for b in batches:
        builder.add(b)
    return builder.sketch


def digests_and_words(batch: pa.RecordBatch) -> Tuple[np.ndarray, np.ndarray]:
    """The row digests (an (n, 16) uint8 matrix) and filter words of a batch."""
    text = schema_string(batch.schema)
    h0 = prefix_state(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest())
    names = batch.schema.names
    encs = [encode(batch.column(c), names[c]) for c in canonical_order(names, "columns")]
    h1, h2 = hash_rows(encs, batch.num_rows, h0, 32)
    return digests_to_bytes(h1, h2), filter_words(batch)


def rows_in(batch: pa.RecordBatch, digests: Set[bytes], words: Optional[np.ndarray] = None
            ) -> Tuple[pa.RecordBatch, List[bytes]]:
    """The rows of ``batch`` whose digest is in ``digests``, with their digests; with ``words`` (the filter words of
    those digests' rows), only the rows whose filter word is one of them are hashed."""
    if batch.num_rows == 0 or not digests:
        return batch.slice(0, 0), []
    if words is not None:
        keep = np.flatnonzero(np.isin(filter_words(batch), words))
        if len(keep) == 0:
            return batch.slice(0, 0), []
        batch = batch.take(pa.array(keep))
    found, _ = digests_and_words(batch)
    raw = [found[i].tobytes() for i in range(len(found))]
    hit = [i for i, d in enumerate(raw) if d in digests]
    return batch.take(pa.array(hit, pa.int64())), [raw[i] for i in hit]


def each_batch(obj: Any, columns: Optional[Sequence[str]] = None, **options: Any) -> Iterator[pa.RecordBatch]:
    return to_batches(obj, columns, **options)[1]
