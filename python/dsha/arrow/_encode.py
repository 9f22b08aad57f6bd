"""Arrow arrays -> canonical slot bytes (SPEC.md §3) for many rows at once.

An encoded array (``Enc``) is either *fixed* — an (n, w) uint8 matrix, every row w bytes (fixed-width values without
nulls, the common case) — or *variable* — int64 offsets (n + 1) into a flat uint8 buffer. Everything is built with
numpy index arithmetic from the Arrow buffers; there is no Python loop over rows or values.
"""
from __future__ import annotations

from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.types as pat

from dsha.arrow._murmur import hash_joined, hash_matrix, large_binary, scatter_segments, segmented_sum128
from dsha.arrow._types import _EXTENSION_TYPE, _is, canonical_order
from dsha.errors import UnsupportedTypeError


def put_columns(dst: np.ndarray, at: int, src: np.ndarray) -> None:
    """dst[:, at:at + w] = src for a C-contiguous (n, W) uint8 ``dst`` and an (n, w) uint8 ``src``: each row's w
    bytes copied as one w-byte item (both viewed as records) rather than byte by byte, 2-5x faster for the narrow
    columns of a row matrix."""
    n, w = src.shape
    if w == 0 or n == 0:
        return
    if not dst.flags.c_contiguous:
        dst[:, at:at + w] = src
        return
    rec = np.dtype({"names": ["v"], "formats": [f"V{w}"], "offsets": [at], "itemsize": dst.shape[1]})
    dst.view(rec).reshape(n)["v"] = np.ascontiguousarray(src).view(f"V{w}").reshape(n)


class Enc:
    """Encoded rows, in one of three forms:

    * fixed: ``mat`` (n, w), or ``raw`` (n, w - 1) values behind an implicit presence byte 0x01;
    * variable: ``offsets`` (n + 1) into ``data``;
    * length-prefixed segments (``seg``), written straight to their destination without an intermediate buffer:
      row i is 0x01 || u32(prefix[i]) || src[src_starts[i]:+lengths[i]], or 0x00 where not valid[i].
    """
    __slots__ = ("_data", "_mat", "_offsets", "n", "raw", "seg")

    def __init__(self, n: int, mat: Optional[np.ndarray] = None, offsets: Optional[np.ndarray] = None,
                 data: Optional[np.ndarray] = None, raw: Optional[np.ndarray] = None, seg: Any = None) -> None:
        self.n, self._mat, self._offsets, self._data, self.raw, self.seg = n, mat, offsets, data, raw, seg

    @property
    def fixed(self) -> bool:
        return self._mat is not None or self.raw is not None

    @property
    def mat(self) -> Optional[np.ndarray]:
        if self._mat is None and self.raw is not None:
            m = np.empty((self.n, 1 + self.raw.shape[1]), dtype=np.uint8)
            self.write_into(m, 0)
            self._mat = m
        return self._mat

    @property
    def width(self) -> int:
        if self._mat is not None:
            return int(self._mat.shape[1])
        assert self.raw is not None
        return int(self.raw.shape[1]) + 1

    def write_into(self, dst: np.ndarray, at: int) -> int:
        """Writes the (fixed) rows into columns at.. of the 2-d ``dst``; returns the next column."""
        if self._mat is None:
            assert self.raw is not None
            w = int(self.raw.shape[1])
            dst[:, at] = 1
            put_columns(dst, at + 1, self.raw)
            return at + 1 + w
        put_columns(dst, at, self._mat)
        return at + int(self._mat.shape[1])

    def lengths(self) -> np.ndarray:
        if self.fixed:
            return np.full(self.n, self.width, dtype=np.int64)
        if self._offsets is None:
            valid, lengths = self.seg[0], self.seg[1]
            return lengths + 5 if valid is None else np.where(valid, lengths + 5, 1)
        return np.diff(self._offsets)

    def write_var(self, out: np.ndarray, starts: np.ndarray, lengths: Optional[np.ndarray] = None) -> None:
        """Writes the rows into the flat ``out`` at ``starts``."""
        if self.fixed:
            w = self.width
            if w:
                out[starts[:, None] + np.arange(w)] = self.mat
        elif self._offsets is None:
            valid, ln, src, src_starts, prefix = self.seg
            if valid is None:
                out[starts] = 1
                out[starts[:, None] + np.arange(1, 5)] = prefix
                scatter_segments(out, starts + 5, src, src_starts, ln)
            else:
                out[starts] = valid
                st = starts[valid]
                out[st[:, None] + np.arange(1, 5)] = prefix[valid]
                scatter_segments(out, st + 5, src, src_starts[valid], ln[valid])
        else:
            assert self._data is not None and self._offsets is not None
            scatter_segments(out, starts, self._data, self._offsets[:-1],
                             np.diff(self._offsets) if lengths is None else lengths)

    def _materialise(self) -> None:
        off = _offsets_of(self.lengths())
        out = np.empty(int(off[-1]), dtype=np.uint8)
        self.write_var(out, off[:-1])
        self._offsets, self._data = off, out

    @property
    def offsets(self) -> np.ndarray:
        if self._offsets is None and not self.fixed:
            self._materialise()
        assert self._offsets is not None
        return self._offsets

    @property
    def data(self) -> np.ndarray:
        if self._offsets is None and not self.fixed:
            self._materialise()
        assert self._data is not None
        return self._data

    def starts_ends(self, first: np.ndarray, last: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """Byte range, in this encoding's flat data, of the rows first..last-1 (vectorised)."""
        if self.fixed:
            w = self.width
            return first * w, last * w
        return self.offsets[first], self.offsets[last]

    def flat(self) -> np.ndarray:
        return np.ascontiguousarray(self.mat).reshape(-1) if self.fixed else self.data


def _offsets_of(lengths: np.ndarray) -> np.ndarray:
    off = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=off[1:])
    return off


def _concat_into(encs: Sequence[Enc], lens: Sequence[np.ndarray], out: np.ndarray, row_starts: np.ndarray) -> None:
    cur = row_starts.copy()
    for e, ln in zip(encs, lens):
        e.write_var(out, cur, ln)
        cur += ln


def concat(encs: Sequence[Enc], n: int) -> Enc:
    """Row-wise concatenation: row i is encs[0] row i || encs[1] row i || ..."""
    if all(e.fixed for e in encs):
        if len(encs) == 1:
            return encs[0]
        m = np.empty((n, sum(e.width for e in encs)), dtype=np.uint8)
        at = 0
        for e in encs:
            at = e.write_into(m, at)
        return Enc(n, mat=m)
    lens = [e.lengths() for e in encs]
    offsets = _offsets_of(np.sum(lens, axis=0))
    out = np.empty(int(offsets[-1]), dtype=np.uint8)
    _concat_into(encs, lens, out, offsets[:-1])
    return Enc(n, offsets=offsets, data=out)


def with_presence(inner: Enc, valid: Optional[np.ndarray]) -> Enc:
    """Slots: 0x01 || inner for present rows, 0x00 for nulls (inner ignored)."""
    n = inner.n
    if valid is None:
        if inner.fixed:
            return Enc(n, raw=inner.mat)
        lens = inner.lengths() + 1
    else:
        if inner.fixed:
            mat = inner.mat
            assert mat is not None
            w = mat.shape[1]
            full = np.empty((n, 1 + w), dtype=np.uint8)
            full[:, 0] = valid
            full[:, 1:] = mat
            mask = np.empty((n, 1 + w), dtype=bool)
            mask[:, 0] = True
            mask[:, 1:] = valid[:, None]
            return Enc(n, offsets=_offsets_of(np.where(valid, 1 + w, 1)), data=full[mask])
        lens = np.where(valid, inner.lengths() + 1, 1)
    offsets = _offsets_of(lens)
    out = np.empty(int(offsets[-1]), dtype=np.uint8)
    starts = offsets[:-1]
    if valid is None:
        out[starts] = 1
        inner.write_var(out, starts + 1, lens - 1)
    else:
        out[starts] = valid
        il = inner.lengths()
        scatter_segments(out, starts[valid] + 1, inner.data, inner.offsets[:-1][valid], il[valid])
    return Enc(n, offsets=offsets, data=out)


def _pieces(e: Enc) -> List[pa.Array]:
    """Arrow arrays whose row-wise concatenation is ``e``'s slots, mostly views of buffers that exist already
    (a string column's bytes are not copied here: Arrow copies them once, into the row)."""
    n = e.n
    if e.fixed:
        m = np.ascontiguousarray(e.mat)
        return [large_binary(np.arange(n + 1, dtype=np.int64) * m.shape[1], m)]
    if e.seg is not None and e._offsets is None:
        valid, ln, src, st, prefix = e.seg
        ends = st + ln
        if n and np.array_equal(st[1:], ends[:-1]):  # the payloads lie back to back in src (a plain Arrow column)
            head = np.empty((n, 5), dtype=np.uint8)
            head[:, 0] = 1 if valid is None else valid
            head[:, 1:] = prefix
            if valid is None:
                heads = large_binary(np.arange(n + 1, dtype=np.int64) * 5, head)
            else:  # a null is the single byte 0x00
                keep = np.ones((n, 5), dtype=bool)
                keep[:, 1:] = valid[:, None]
                heads = large_binary(_offsets_of(np.where(valid, 5, 1)), head[keep])
            return [heads, large_binary(np.append(st, ends[-1]), src)]
    return [large_binary(e.offsets, e.data)]


def _row_pieces(encs: Sequence[Enc], n: int) -> List[pa.Array]:
    """_pieces of every column, with the fixed-width slots that follow each other — and the 5-byte head (0x01, u32
    length) of a string without nulls after them — written into one matrix: Arrow's row-wise join costs per piece."""
    pieces: List[pa.Array] = []
    run: List[Any] = []  # fixed Encs and head matrices, in row order

    def flush() -> None:
        if run:
            m = np.empty((n, sum(x.width if isinstance(x, Enc) else x.shape[1] for x in run)), dtype=np.uint8)
            at = 0
            for x in run:
                if isinstance(x, Enc):
                    at = x.write_into(m, at)
                else:
                    put_columns(m, at, x)
                    at += x.shape[1]
            pieces.append(large_binary(np.arange(n + 1, dtype=np.int64) * m.shape[1], m))
            run.clear()

    for e in encs:
        if e.fixed:
            run.append(e)
            continue
        if e.seg is not None and e._offsets is None and e.seg[0] is None:
            _, ln, src, st, prefix = e.seg
            ends = st + ln
            if n and np.array_equal(st[1:], ends[:-1]):
                head = np.empty((n, 5), dtype=np.uint8)
                head[:, 0] = 1
                head[:, 1:] = prefix
                run.append(head)
                flush()
                pieces.append(large_binary(np.append(st, ends[-1]), src))
                continue
        flush()
        pieces.extend(_pieces(e))
    flush()
    return pieces


def hash_rows_joined(encs: Sequence[Enc], n: int, h0: Tuple[int, int] = (0, 0), extra_len: int = 0
                     ) -> Tuple[np.ndarray, np.ndarray]:
    """hash_rows for rows of different lengths (strings, nulls, nested values): Arrow joins each row's slots."""
    lengths = np.zeros(n, dtype=np.int64)
    fixed = 0  # the fixed widths added once, not as an array each
    for e in encs:
        if e.fixed:
            fixed += e.width
        else:
            lengths += e.lengths()
    lengths += fixed
    return hash_joined(_row_pieces(encs, n), lengths, h0, extra_len)


def hash_rows(encs: Sequence[Enc], n: int, h0: Tuple[int, int] = (0, 0), extra_len: int = 0
              ) -> Tuple[np.ndarray, np.ndarray]:
    """MurmurHash3_x64_128 of every row's concatenated bytes, continuing from state ``h0`` after ``extra_len``
    prefix bytes: (h1, h2) uint64 arrays."""
    if n == 0:
        return np.zeros(0, np.uint64), np.zeros(0, np.uint64)
    if all(e.fixed for e in encs):
        w = sum(e.width for e in encs)
        padded = np.empty((n, (w // 16 + 1) * 16), dtype=np.uint8)
        padded[:, w:] = 0
        at = 0
        for e in encs:
            at = e.write_into(padded, at)
        return hash_matrix(padded, w, h0, extra_len)
    return hash_rows_joined(encs, n, h0, extra_len)


# ---------------------------------------------------------------------------------------------------------------
# Arrow buffers


def _valid(arr: pa.Array) -> Optional[np.ndarray]:
    """Validity as a bool array, or None when there are no nulls."""
    if arr.null_count == 0:
        return None
    n = len(arr)
    if pat.is_null(arr.type):
        return np.zeros(n, dtype=bool)
    buf = arr.buffers()[0]
    if buf is None:
        return np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    bits = np.unpackbits(np.frombuffer(buf, dtype=np.uint8), bitorder="little")
    return bits[arr.offset:arr.offset + n].astype(bool)


def _values(arr: pa.Array, dtype: Any, index: int = 1) -> np.ndarray:
    n = len(arr)
    buf = arr.buffers()[index]
    if buf is None or n == 0:
        return np.zeros(n, dtype=dtype)
    return np.frombuffer(buf, dtype=dtype, count=arr.offset + n)[arr.offset:]


def _bytes_matrix(v: np.ndarray, dtype: str) -> np.ndarray:
    v = np.ascontiguousarray(v.astype(dtype, copy=False))
    return v.view(np.uint8).reshape(len(v), v.dtype.itemsize)


def plain(arr: pa.Array) -> pa.Array:
    """Decodes extension, dictionary, run-end-encoded and view arrays to plain arrays of their values."""
    while True:
        t = arr.type
        if isinstance(arr, pa.ExtensionArray) or isinstance(t, _EXTENSION_TYPE):
            arr = arr.storage
        elif pat.is_dictionary(t):
            arr = arr.dictionary_decode()
        elif _is("is_run_end_encoded", t):
            if hasattr(pc, "run_end_decode"):
                arr = pc.run_end_decode(arr)
            else:
                ends = np.asarray(arr.run_ends.to_numpy(zero_copy_only=False), dtype=np.int64)
                idx = np.searchsorted(ends, np.arange(arr.offset, arr.offset + len(arr)), side="right")
                arr = arr.values.take(pa.array(idx))
        elif _is("is_string_view", t):
            arr = arr.cast(pa.large_string())
        elif _is("is_binary_view", t):
            arr = arr.cast(pa.large_binary())
        else:
            return arr


def _bad(mask: np.ndarray, valid: Optional[np.ndarray]) -> bool:
    if valid is not None:
        mask = mask & valid
    return bool(mask.any())


def _whole(v: np.ndarray, factor: int, valid: Optional[np.ndarray], path: str, t: pa.DataType, what: str
           ) -> np.ndarray:
    """v // factor, requiring whole multiples of ``factor`` (no silent truncation)."""
    if _bad(v % factor != 0, valid):
        raise UnsupportedTypeError(
            f"column {path}: {t} holds values that are not a whole number of {what}; dsha-v1 hashes {what} "
            f"(as Spark stores them): cast or truncate the column to microseconds first "
            f"(e.g. pyarrow.compute.cast(..., safe=False) or floor_temporal)")
    return v // factor


def _scale(v: np.ndarray, factor: int, valid: Optional[np.ndarray], path: str, t: pa.DataType) -> np.ndarray:
    if factor == 1:  # microseconds already: every int64 is a value Spark holds, Long.MinValue included
        return v
    lim = np.iinfo(np.int64).max // factor
    if _bad((v > lim) | (v < -lim), valid):
        raise UnsupportedTypeError(f"column {path}: {t} holds a value out of the range of microseconds in int64")
    return v * np.int64(factor)


_TO_MICROS = {"s": 1_000_000, "ms": 1000, "us": 1}


def _micros(arr: pa.Array, valid: Optional[np.ndarray], path: str) -> np.ndarray:
    t = arr.type
    v = _values(arr, "<i8").astype(np.int64)
    if t.unit == "ns":
        return _whole(v, 1000, valid, path, t, "microseconds")
    return _scale(v, _TO_MICROS[t.unit], valid, path, t)


def _fixed_value(arr: pa.Array, valid: Optional[np.ndarray], path: str) -> Optional[np.ndarray]:
    """The value layout of a fixed-width type as an (n, w) matrix, or None if the type is not fixed-width."""
    t = arr.type
    n = len(arr)
    if pat.is_boolean(t):
        buf = arr.buffers()[1]
        if buf is None or n == 0:
            return np.zeros((n, 1), dtype=np.uint8)
        bits = np.unpackbits(np.frombuffer(buf, dtype=np.uint8), bitorder="little")
        return bits[arr.offset:arr.offset + n].reshape(n, 1)
    for pred, src, dst in ((pat.is_int8, "<i1", "<i1"), (pat.is_int16, "<i2", "<i2"), (pat.is_int32, "<i4", "<i4"),
                           (pat.is_int64, "<i8", "<i8"), (pat.is_uint8, "<u1", "<i2"),
                           (pat.is_uint16, "<u2", "<i4"), (pat.is_uint32, "<u4", "<i8")):
        if pred(t):
            return _bytes_matrix(_values(arr, src), dst)
    if pat.is_uint64(t):
        m = np.zeros((n, 16), dtype=np.uint8)
        m[:, :8] = _bytes_matrix(_values(arr, "<u8"), "<u8")
        return m
    if pat.is_float16(t) or pat.is_float32(t):
        x = _values(arr, "<f2").astype(np.float32) if pat.is_float16(t) else _values(arr, "<f4").astype(np.float32)
        bits = x.view(np.uint32).copy()
        bits[x == 0] = 0
        bits[np.isnan(x)] = 0x7FC00000
        return _bytes_matrix(bits, "<u4")
    if pat.is_float64(t):
        x = _values(arr, "<f8").astype(np.float64)
        bits = x.view(np.uint64).copy()
        bits[x == 0] = 0
        bits[np.isnan(x)] = np.uint64(0x7FF8000000000000)
        return _bytes_matrix(bits, "<u8")
    if pat.is_decimal(t):
        if t.precision > 38:
            raise UnsupportedTypeError(f"column {path}: {t} has precision {t.precision} > 38")
        width = t.bit_width // 8
        if width <= 8:
            v = _values(arr, "<i4" if width == 4 else "<i8").astype(np.int64)
            if t.precision <= 18:
                return _bytes_matrix(v, "<i8")
            m = np.empty((n, 16), dtype=np.uint8)
            m[:, :8] = _bytes_matrix(v, "<i8")
            m[:, 8:] = np.where(v < 0, 0xFF, 0).astype(np.uint8)[:, None]
            return m
        if t.precision <= 18:  # the low 8 bytes, copied as one int64 a value (a byte-wise strided copy is slower)
            return _bytes_matrix(_values(arr, np.dtype([("lo", "<u8"), ("rest", f"V{width - 8}")]))["lo"], "<u8")
        raw = _values(arr, np.dtype((np.uint8, width)))
        raw = raw.reshape(n, width)
        return np.ascontiguousarray(raw[:, :16])
    if pat.is_date32(t):
        return _bytes_matrix(_values(arr, "<i4"), "<i4")
    if pat.is_date64(t):
        v = _values(arr, "<i8").astype(np.int64)
        if _bad(v % 86_400_000 != 0, valid):
            raise UnsupportedTypeError(f"column {path}: date64 holds a value that is not a whole day "
                                       f"(milliseconds not a multiple of 86400000); Spark's DATE holds days")
        return _bytes_matrix(v // 86_400_000, "<i4")
    if pat.is_timestamp(t) or pat.is_duration(t):
        return _bytes_matrix(_micros(arr, valid, path), "<i8")
    if pat.is_time32(t):
        v = _values(arr, "<i4").astype(np.int64)
        return _bytes_matrix(v * np.int64(1_000_000_000 if t.unit == "s" else 1_000_000), "<i8")
    if pat.is_time64(t):
        v = _values(arr, "<i8").astype(np.int64)
        if t.unit == "ns":
            _whole(v, 1000, valid, path, t, "microseconds")
            return _bytes_matrix(v, "<i8")
        return _bytes_matrix(v * np.int64(1000), "<i8")
    name = str(t)
    if name == "month_interval":
        return _bytes_matrix(_values(arr, "<i4"), "<i4")
    if name == "month_day_nano_interval":
        rec = _values(arr, np.dtype([("m", "<i4"), ("d", "<i4"), ("ns", "<i8")]))
        m = np.empty((n, 16), dtype=np.uint8)
        m[:, 0:4] = _bytes_matrix(rec["m"], "<i4")
        m[:, 4:8] = _bytes_matrix(rec["d"], "<i4")
        m[:, 8:16] = _bytes_matrix(_whole(rec["ns"].astype(np.int64), 1000, valid, path, t, "microseconds"), "<i8")
        return m
    if name == "day_time_interval":
        rec = _values(arr, np.dtype([("d", "<i4"), ("ms", "<i4")]))
        m = np.zeros((n, 16), dtype=np.uint8)
        m[:, 4:8] = _bytes_matrix(rec["d"], "<i4")
        m[:, 8:16] = _bytes_matrix(rec["ms"].astype(np.int64) * np.int64(1000), "<i8")
        return m
    if pat.is_fixed_size_binary(t):
        w = t.byte_width
        m = np.empty((n, 4 + w), dtype=np.uint8)
        m[:, :4] = _bytes_matrix(np.full(n, w, dtype=np.uint32), "<u4")
        if w:
            m[:, 4:] = _values(arr, np.dtype((np.uint8, w))).reshape(n, w)
        return m
    return None


def _u32(counts: np.ndarray, path: str) -> np.ndarray:
    if len(counts) and int(counts.max()) > 0xFFFFFFFF:
        raise UnsupportedTypeError(f"column {path}: a value longer than 2^32-1 bytes or elements")
    return _bytes_matrix(counts, "<u4")


def _length_prefixed(n: int, valid: Optional[np.ndarray], lengths: np.ndarray, src: np.ndarray, src_starts: np.ndarray,
                     path: str, prefix: Optional[np.ndarray] = None) -> Enc:
    """Slots 0x01 || u32(prefix[i], default lengths[i]) || src[src_starts[i]:+lengths[i]] (0x00 for nulls)."""
    if valid is not None:
        lengths = np.where(valid, lengths, 0)
    return Enc(n, seg=(valid, lengths, src, src_starts, _u32(lengths if prefix is None else prefix, path)))


def _element_ranges(arr: pa.Array, valid: Optional[np.ndarray]) -> Tuple[np.ndarray, np.ndarray]:
    """(first, last) element indices (into arr's child) of each list/map, or empty for nulls."""
    t = arr.type
    n = len(arr)
    if pat.is_fixed_size_list(t):
        k = t.list_size
        first = (np.arange(n, dtype=np.int64) + arr.offset) * k
        last = first + k
    elif _is("is_list_view", t) or _is("is_large_list_view", t):
        dt = "<i8" if _is("is_large_list_view", t) else "<i4"
        first = _values(arr, dt, 1).astype(np.int64)
        last = first + _values(arr, dt, 2).astype(np.int64)
    else:
        dt = "<i8" if pat.is_large_list(t) else "<i4"
        buf = arr.buffers()[1]
        if buf is None or n == 0:
            first = last = np.zeros(n, dtype=np.int64)
        else:
            off = np.frombuffer(buf, dtype=dt, count=arr.offset + n + 1)[arr.offset:].astype(np.int64)
            first, last = off[:-1], off[1:]
    if valid is not None:
        first = np.where(valid, first, 0)
        last = np.where(valid, last, 0)
    return first, last


def _child_window(first: np.ndarray, last: np.ndarray, child: pa.Array) -> Tuple[pa.Array, np.ndarray, np.ndarray]:
    """Restricts the child to the referenced elements: (child slice, first - lo, last - lo)."""
    nonempty = last > first
    if not nonempty.any():
        return child.slice(0, 0), np.zeros_like(first), np.zeros_like(last)
    lo = int(first[nonempty].min())
    hi = int(last[nonempty].max())
    f = np.where(nonempty, first - lo, 0)
    l_ = np.where(nonempty, last - lo, 0)
    return child.slice(lo, hi - lo), f, l_


# the longest string or binary value that is encoded as a fixed-width slot when all of a batch's values have its length
_SHORT_FIXED = 64


def encode(arr: pa.Array, path: str) -> Enc:
    """Slot bytes (SPEC.md §3.1) of every value of ``arr``."""
    arr = plain(arr)
    t = arr.type
    n = len(arr)
    if pat.is_null(t):
        return Enc(n, mat=np.zeros((n, 1), dtype=np.uint8))
    valid = _valid(arr)
    m = _fixed_value(arr, valid, path)
    if m is not None:
        return with_presence(Enc(n, mat=m), valid)
    if pat.is_string(t) or pat.is_binary(t) or pat.is_large_string(t) or pat.is_large_binary(t):
        dt = "<i8" if (pat.is_large_string(t) or pat.is_large_binary(t)) else "<i4"
        if n == 0:
            return Enc(0, offsets=np.zeros(1, dtype=np.int64), data=np.zeros(0, dtype=np.uint8))
        off = np.frombuffer(arr.buffers()[1], dtype=dt, count=arr.offset + n + 1)[arr.offset:].astype(np.int64)
        dbuf = arr.buffers()[2]
        src = np.frombuffer(dbuf, dtype=np.uint8) if dbuf is not None else np.zeros(0, dtype=np.uint8)
        lengths = np.diff(off)
        if valid is None and int(lengths.max()) == int(lengths.min()) <= _SHORT_FIXED:
            # every value the same short length (flags, codes, ids): fixed-width slots, which join the row matrix
            # of the fixed columns beside them instead of being two more pieces of Arrow's row join (per-row cost)
            w = int(lengths[0])
            raw = np.empty((n, 4 + w), dtype=np.uint8)
            raw[:, :4] = _u32(lengths[:1], path)
            put_columns(raw, 4, src[off[0]:off[0] + n * w].reshape(n, w))
            return Enc(n, raw=raw)
        return _length_prefixed(n, valid, lengths, src, off[:-1], path)
    if pat.is_map(t):
        return _encode_map(arr, valid, path)
    nested = encode_nested(arr, valid, path, encode)
    if nested is not None:
        return nested
    raise UnsupportedTypeError(f"column {path}: the Arrow type {t} is not supported by dsha-v1")


def encode_nested(arr: pa.Array, valid: Optional[np.ndarray], path: str, child_slots: Callable[[pa.Array, str], Enc]
                  ) -> Optional[Enc]:
    """Slots of a list or struct array (None for other types), its elements or fields encoded by ``child_slots``
    (``encode``, or the secure encoding's, which differs in maps)."""
    t = arr.type
    n = len(arr)
    if (pat.is_list(t) or pat.is_large_list(t) or pat.is_fixed_size_list(t) or _is("is_list_view", t)
            or _is("is_large_list_view", t)):
        first, last = _element_ranges(arr, valid)
        child, first, last = _child_window(first, last, arr.values)
        ce = child_slots(child, path + "[]")
        b0, b1 = ce.starts_ends(first, last)
        # 0x01 || u32 element count || the element slots (one gather of the elements' bytes from the child)
        return _length_prefixed(n, valid, b1 - b0, ce.flat(), b0, path, prefix=last - first)
    if pat.is_struct(t):
        names = [t.field(i).name for i in range(t.num_fields)]
        order = canonical_order(names, f"column {path}")
        fields = [child_slots(arr.field(i), f"{path}.{names[i]}") for i in order]
        return with_presence(concat(fields, n), valid)
    return None


def map_entries(arr: pa.Array, valid: Optional[np.ndarray]
                ) -> Tuple[pa.Array, pa.Array, np.ndarray, np.ndarray]:
    """The keys and values a map array's maps use (the child sliced to them), and each map's first and last entry
    index into them (0, 0 for an empty or null map)."""
    first, last = _element_ranges(arr, valid)
    lo_hi = last > first
    entries = arr.values  # the struct<key, value> child, not sliced to the array's offset (like ListArray.values)
    keys, items = entries.field(0), entries.field(1)
    if lo_hi.any():
        lo = int(first[lo_hi].min())
        hi = int(last[lo_hi].max())
    else:
        lo = hi = 0
    f = np.where(lo_hi, first - lo, 0)
    l_ = np.where(lo_hi, last - lo, 0)
    return keys.slice(lo, hi - lo), items.slice(lo, hi - lo), f, l_


def check_map_keys(keys: pa.Array, f: np.ndarray, l_: np.ndarray, path: str) -> None:
    """Refuses a null key among the entries the maps use (``map_entries``)."""
    if keys.null_count:
        kv = _valid(plain(keys))
        if kv is not None:
            covered = np.zeros(len(keys) + 1, dtype=np.int64)
            np.add.at(covered, f, 1)
            np.add.at(covered, l_, -1)
            used = np.cumsum(covered)[:-1] > 0
            if (used & ~kv).any():
                raise UnsupportedTypeError(f"column {path}: a map has a null key (Spark map keys are never null)")


def _encode_map(arr: pa.Array, valid: Optional[np.ndarray], path: str) -> Enc:
    n = len(arr)
    keys, items, f, l_ = map_entries(arr, valid)
    check_map_keys(keys, f, l_, path)
    m = len(keys)
    h1, h2 = hash_rows([encode(keys, path + ".key"), encode(items, path + ".value")], m)
    slo, shi = segmented_sum128(h1, h2, f, l_)
    payload = np.empty((n, 20), dtype=np.uint8)
    payload[:, :4] = _u32(l_ - f, path)
    payload[:, 4:12] = _bytes_matrix(slo, "<u8")
    payload[:, 12:20] = _bytes_matrix(shi, "<u8")
    return with_presence(Enc(n, mat=payload), valid)


def encode_columns(arrays: Sequence[pa.Array], names: Sequence[str]) -> List[Enc]:
    """Every column's slots, in canonical order (SPEC.md §4.2): the row bytes are their row-wise concatenation."""
    order = canonical_order(names, "columns")
    return [encode(arrays[i], names[i]) for i in order]
