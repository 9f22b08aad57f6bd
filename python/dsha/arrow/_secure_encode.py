"""The secure encoding of rows (SPEC.md §16.1) from Arrow arrays: dsha-v1's slots (``_encode``) except that a map
is written as its entries, each ``u32 length || slot(key) || slot(value)``, sorted by their bytes, after ``u32
count`` — at every depth. Arrow has no variant, so maps are the only difference. Values without a map inside are
``_encode``'s, untouched; the entries of maps are sorted per map in Python (maps are rare and small), the rest stays
numpy index arithmetic."""
from __future__ import annotations

import struct
from typing import List, Optional, Sequence, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.types as pat

from dsha.arrow._encode import (
    Enc,
    _valid,
    check_map_keys,
    concat,
    encode,
    encode_nested,
    map_entries,
    plain,
    with_presence,
)
from dsha.arrow._types import _EXTENSION_TYPE, _is, canonical_order
from dsha.errors import UnsupportedTypeError

__all__ = ["row_bytes", "secure_columns", "secure_encode"]


def _has_map(t: pa.DataType) -> bool:
    """Whether a map is anywhere inside ``t`` (then the secure encoding differs from dsha-v1's)."""
    if pat.is_map(t):
        return True
    if isinstance(t, _EXTENSION_TYPE):
        return _has_map(t.storage_type)
    if pat.is_dictionary(t):
        return _has_map(t.value_type)
    if _is("is_run_end_encoded", t):
        return _has_map(t.value_type)
    if pat.is_struct(t):
        return any(_has_map(t.field(i).type) for i in range(t.num_fields))
    value_type = getattr(t, "value_type", None)  # list, large_list, fixed_size_list, list views
    return isinstance(value_type, pa.DataType) and _has_map(value_type)


def secure_encode(arr: pa.Array, path: str) -> Enc:
    """Slot bytes of every value of ``arr`` in the secure encoding (SPEC.md §16.1)."""
    if not _has_map(arr.type):
        return encode(arr, path)
    arr = plain(arr)
    valid = _valid(arr)
    if pat.is_map(arr.type):
        return _secure_map(arr, valid, path)
    nested = encode_nested(arr, valid, path, secure_encode)
    if nested is None:
        raise UnsupportedTypeError(f"column {path}: the Arrow type {arr.type} is not supported")
    return nested


def _secure_map(arr: pa.Array, valid: Optional[np.ndarray], path: str) -> Enc:
    n = len(arr)
    keys, items, first, last = map_entries(arr, valid)
    check_map_keys(keys, first, last, path)
    m = len(keys)
    enc = concat([secure_encode(keys, path + ".key"), secure_encode(items, path + ".value")], m)
    flat = enc.flat().tobytes()
    e0, e1 = enc.starts_ends(np.arange(m, dtype=np.int64), np.arange(1, m + 1, dtype=np.int64))
    starts, ends = e0.tolist(), e1.tolist()
    parts: List[bytes] = []
    for f, l_ in zip(first.tolist(), last.tolist()):  # a null map's entries are none: its bytes are not written
        ordered = sorted(flat[starts[j]:ends[j]] for j in range(f, l_))
        parts.append(struct.pack("<I", l_ - f) + b"".join(struct.pack("<I", len(e)) + e for e in ordered))
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum([len(p) for p in parts], out=offsets[1:])
    return with_presence(Enc(n, offsets=offsets, data=np.frombuffer(b"".join(parts), dtype=np.uint8)), valid)


def secure_columns(arrays: Sequence[pa.Array], names: Sequence[str]) -> List[Enc]:
    """Every column's slots in the secure encoding, in canonical order."""
    order = canonical_order(names, "columns")
    return [secure_encode(arrays[i], names[i]) for i in order]


def row_bytes(batch: pa.RecordBatch) -> Tuple[np.ndarray, bytes]:
    """Each row's secure encoding (without the schema digest): (offsets of n + 1 rows, the bytes of all rows)."""
    n = batch.num_rows
    encs = secure_columns([batch.column(i) for i in range(batch.num_columns)], batch.schema.names)
    if not encs:
        return np.zeros(n + 1, dtype=np.int64), b""
    rows = concat(encs, n)
    if rows.fixed:
        return np.arange(n + 1, dtype=np.int64) * rows.width, rows.flat().tobytes()
    return rows.offsets, rows.data.tobytes()
