"""Sketches and differences (SPEC.md §17) in Python and numpy, backend-free: the byte layout (format 2, reads 1), the
cells of row digests, merging, folding, subtracting, and decoding a difference by peeling.

Cells are numpy arrays: ``count`` (u64, read as i64), the 192-bit ``sum`` as six 32-bit limbs (an (m, 6) u64
array, each limb below 2^32, low limb first), ``check`` and ``filter`` (u64; ``filter`` is None for a sketch without
filter words). Sums of many cells add limb by limb and then carry, so folding and merging are whole-array operations;
decoding peels in Python integers over the (few) cells of the fold it tries.

The Arrow engine builds a batch's cells from its row digests and filter words (:func:`add_digests`); the jar-free
``dsha.diff`` merges the sketches of partitions and decodes their difference on the driver.
"""
from __future__ import annotations

import hashlib
import math
import struct
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from dsha.core.algorithms import BY_ID
from dsha.core.algorithms import DEFAULT as ALGORITHM
from dsha.core.sketch_sizes import MAX_CELLS, fold_sizes, valid_cells
from dsha.core.states import DigestState, varint
from dsha.errors import StateError

__all__ = ["FORMAT_VERSION", "MAGIC", "MAX_CELLS", "Decoded", "Sketch", "check_word", "decode", "decode_smallest",
           "fold_sizes", "mix", "valid_cells"]

MAGIC = b"DSHK"
FORMAT_VERSION = 2
G = 0x9E3779B97F4A7C15
_CHECK_SEED = 0xD1B54A32D192ED03
_M64 = (1 << 64) - 1
_M32 = np.uint64(0xFFFFFFFF)
_LIMBS = 6  # 192 bits


def mix(z: int) -> int:
    """SplitMix64's output function (SPEC.md §17.2), on one u64."""
    z ^= z >> 30
    z = (z * 0xBF58476D1CE4E5B9) & _M64
    z ^= z >> 27
    z = (z * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def mix_array(z: np.ndarray) -> np.ndarray:
    """:func:`mix` over a u64 array (wrapping arithmetic)."""
    z = z ^ (z >> np.uint64(30))
    z = z * np.uint64(0xBF58476D1CE4E5B9)
    z = z ^ (z >> np.uint64(27))
    z = z * np.uint64(0x94D049BB133111EB)
    out: np.ndarray = z ^ (z >> np.uint64(31))
    return out


def cell_words(lo: np.ndarray, hi: np.ndarray) -> List[np.ndarray]:
    """``word_j(x)`` for j = 0, 1, 2 of digests given as their u64 halves (SPEC.md §17.2)."""
    with np.errstate(over="ignore"):
        seed = lo ^ (hi * np.uint64(G))
        return [mix_array(seed + np.uint64(((j + 1) * G) & _M64)) for j in range(3)]


def check_words(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``check(x)`` of digests given as their u64 halves."""
    return mix_array(hi ^ mix_array(lo ^ np.uint64(_CHECK_SEED)))


def _fold(a: np.ndarray, k: int, m: int) -> np.ndarray:
    """Cells ``i, i + m, i + 2m, ...`` of a u64 array of ``k·m`` cells summed (mod 2^64)."""
    out: np.ndarray = a.reshape(k, m).sum(axis=0, dtype=np.uint64)
    return out


def check_word(x: int) -> int:
    lo, hi = x & _M64, x >> 64
    return mix(hi ^ mix(lo ^ _CHECK_SEED))


def _cells_of(x: int, m: int) -> List[int]:
    lo, hi = x & _M64, x >> 64
    seed = lo ^ ((hi * G) & _M64)
    return [mix((seed + (j + 1) * G) & _M64) % m for j in range(3)]


def _carry(limbs: np.ndarray) -> np.ndarray:
    """Limbs of any size below 2^64 - 2^32 normalised to 32 bits each, mod 2^192 (the top carry dropped)."""
    out = np.empty_like(limbs)
    carry = np.zeros(limbs.shape[:-1], dtype=np.uint64)
    for k in range(_LIMBS):
        v = limbs[..., k] + carry
        out[..., k] = v & _M32
        carry = v >> np.uint64(32)
    return out


def _negate(limbs: np.ndarray) -> np.ndarray:
    """-x mod 2^192 of normalised limbs."""
    out = _M32 - limbs
    out[..., 0] += np.uint64(1)
    return _carry(out)


def _limbs_of(words: np.ndarray) -> np.ndarray:
    """(m, 3) u64 words (low first) as (m, 6) 32-bit limbs."""
    out = np.empty((len(words), _LIMBS), dtype=np.uint64)
    out[:, 0::2] = words & _M32
    out[:, 1::2] = words >> np.uint64(32)
    return out


def _words_of(limbs: np.ndarray) -> np.ndarray:
    out: np.ndarray = limbs[:, 0::2] | (limbs[:, 1::2] << np.uint64(32))
    return out


def _signed(v: int, bits: int) -> int:
    return v - (1 << bits) if v >> (bits - 1) else v


@dataclass
class Column:
    """A column's digest in a sketch: its name, the schema digest of the one-column table, the sum of its values."""

    name: str
    schema_digest: bytes
    sum: int


@dataclass
class Sketch:
    """A parsed (or built) sketch, SPEC.md §17.1."""

    schema: str
    schema_digest: bytes
    rows: int
    sum: int
    count: np.ndarray  # (m,) u64
    sums: np.ndarray  # (m, 6) u64 limbs
    check: np.ndarray  # (m,) u64
    filter: Optional[np.ndarray]  # (m,) u64, or None: no filter words (format version 1)
    columns: List[Column] = field(default_factory=list)
    has_columns: bool = False

    @property
    def cells(self) -> int:
        return len(self.count)

    @classmethod
    def empty(cls, schema: str, m: int, columns: Sequence[Tuple[str, bytes]] = (), with_columns: bool = False,
              filters: bool = True) -> Sketch:
        """The sketch of no rows of ``schema`` with ``m`` cells (and, ``with_columns``, the given columns' digests:
        (name, one-column schema digest), in canonical order)."""
        if not valid_cells(m):
            raise ValueError(f"a sketch has 2^i or 3·2^i cells, 1 to {MAX_CELLS}, not {m!r}")
        digest = hashlib.sha256(schema.encode("utf-8", "surrogatepass")).digest()
        return cls(schema, digest, 0, 0, np.zeros(m, np.uint64), np.zeros((m, _LIMBS), np.uint64),
                   np.zeros(m, np.uint64), np.zeros(m, np.uint64) if filters else None,
                   [Column(n, d, 0) for n, d in columns] if with_columns else [], with_columns)

    # -- the state parts -------------------------------------------------------------------------------------------

    def state(self) -> DigestState:
        return DigestState(ALGORITHM, self.schema, self.schema_digest, self.rows, self.sum)

    @property
    def digest(self) -> str:
        return self.state().digest

    def column_digest(self, c: Column) -> str:
        return DigestState(ALGORITHM, "", c.schema_digest, self.rows, c.sum).digest

    # -- adding rows -----------------------------------------------------------------------------------------------

    def add_digests(self, lo: np.ndarray, hi: np.ndarray, filters: Optional[np.ndarray] = None) -> None:
        """Adds one occurrence of each digest ``lo + 2^64·hi`` (u64 arrays) with its row's filter word (u64 array of
        u32 values) to the cells (SPEC.md §17.2); ``rows`` and ``sum`` are the caller's."""
        m = self.cells
        step = 1 << 20  # float64 bincount sums of 32-bit limbs stay exact below 2^53
        checks = check_words(lo, hi)
        for at in range(0, len(lo), step):
            l_, h_, k_ = lo[at:at + step], hi[at:at + step], checks[at:at + step]
            f_ = None if filters is None else filters[at:at + step]
            parts = [l_ & _M32, l_ >> np.uint64(32), h_ & _M32, h_ >> np.uint64(32)]
            for w in cell_words(l_, h_):
                idx = (w % np.uint64(m)).astype(np.int64)
                self.count += np.bincount(idx, minlength=m).astype(np.uint64)
                for k, part in enumerate(parts):
                    self.sums[:, k] += np.bincount(idx, weights=part.astype(np.float64), minlength=m).astype(np.uint64)
                self.check += self._sum64(idx, k_, m)
                if self.filter is not None and f_ is not None:
                    self.filter += np.bincount(idx, weights=f_.astype(np.float64), minlength=m).astype(np.uint64)
            self.sums = _carry(self.sums)
        if filters is None:
            self.filter = None

    @staticmethod
    def _sum64(idx: np.ndarray, values: np.ndarray, m: int) -> np.ndarray:
        low = np.bincount(idx, weights=(values & _M32).astype(np.float64), minlength=m).astype(np.uint64)
        high = np.bincount(idx, weights=(values >> np.uint64(32)).astype(np.float64), minlength=m).astype(np.uint64)
        with np.errstate(over="ignore"):
            out: np.ndarray = low + (high << np.uint64(32))
        return out

    # -- merging, folding, subtracting (SPEC.md §17.3) -------------------------------------------------------------

    def _same_schema(self, other: Sketch, what: str) -> None:
        if other.schema_digest != self.schema_digest:
            raise StateError(f"cannot {what} sketches of different schemas: {self.schema} and {other.schema}")

    def merge(self, other: Sketch) -> Sketch:
        self._same_schema(other, "merge")
        if other.cells != self.cells:
            raise StateError(f"cannot merge sketches of {self.cells} and {other.cells} cells")
        if other.has_columns != self.has_columns or [c.name for c in other.columns] != [c.name for c in self.columns]:
            raise StateError("cannot merge a sketch with column digests and one without (or of other columns)")
        with np.errstate(over="ignore"):
            filters = None if self.filter is None or other.filter is None else self.filter + other.filter
            return Sketch(self.schema, self.schema_digest, (self.rows + other.rows) & _M64,
                          (self.sum + other.sum) % (1 << 128), self.count + other.count,
                          _carry(self.sums + other.sums), self.check + other.check, filters,
                          [Column(a.name, a.schema_digest, (a.sum + b.sum) % (1 << 128))
                           for a, b in zip(self.columns, other.columns)], self.has_columns)

    def fold(self, m: int) -> Sketch:
        """The same rows' sketch with ``m`` cells, ``m`` an allowed size dividing this one's."""
        if not valid_cells(m) or self.cells % m:
            raise ValueError(f"a sketch of {self.cells} cells folds to an allowed size dividing it, not {m}")
        k = self.cells // m
        if k == 1:
            return self
        with np.errstate(over="ignore"):
            return Sketch(self.schema, self.schema_digest, self.rows, self.sum, _fold(self.count, k, m),
                          _carry(self.sums.reshape(k, m, _LIMBS).sum(axis=0, dtype=np.uint64)),
                          _fold(self.check, k, m), None if self.filter is None else _fold(self.filter, k, m),
                          self.columns, self.has_columns)

    def minus(self, other: Sketch) -> Difference:
        """The difference of the cells, both folded to the gcd of their sizes."""
        self._same_schema(other, "subtract")
        m = math.gcd(self.cells, other.cells)
        a, b = self.fold(m), other.fold(m)
        with np.errstate(over="ignore"):
            filters = None if a.filter is None or b.filter is None else a.filter - b.filter
            return Difference(a.count - b.count, _carry(a.sums + _negate(b.sums)), a.check - b.check, filters)

    # -- bytes (SPEC.md §17.1) -------------------------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        m = self.cells
        version = 1 if self.filter is None else 2
        cell = np.zeros((m, 6 if version == 2 else 5), dtype="<u8")
        cell[:, 0] = self.count
        cell[:, 1:4] = _words_of(self.sums)
        cell[:, 4] = self.check
        if version == 2:
            assert self.filter is not None
            cell[:, 5] = self.filter
        text = self.schema.encode("utf-8", "surrogatepass")
        out = [MAGIC, bytes([version]), varint(BY_ID[ALGORITHM].code), struct.pack("<I", 32), self.schema_digest,
               struct.pack("<Q", self.rows & _M64), self.sum.to_bytes(16, "little"), struct.pack("<I", m),
               cell.tobytes(), struct.pack("<I", len(self.columns))]
        for c in self.columns:
            name = c.name.encode("utf-8", "surrogatepass")
            out += [struct.pack("<I", len(name)), name, c.schema_digest, c.sum.to_bytes(16, "little")]
        out += [struct.pack("<I", len(text)), text]
        return b"".join(out)

    @classmethod
    def parse(cls, data: bytes) -> Sketch:
        """Reads a sketch (format 2, or 1: no filter words), checking its magic, lengths, algorithm and schema."""
        data = bytes(data)
        at = 0

        def take(n: int, what: str) -> bytes:
            nonlocal at
            if n < 0 or n > len(data) - at:
                raise StateError(f"malformed dsha sketch: truncated: {what} needs {n} bytes at offset {at}, but the "
                                 f"sketch has {len(data)} bytes")
            at += n
            return data[at - n:at]

        def u32(what: str) -> int:
            return int(struct.unpack("<I", take(4, what))[0])

        if take(4, "the magic") != MAGIC:
            raise StateError(f"malformed dsha sketch: bad magic (a sketch starts with {MAGIC.hex()}, 'DSHK')")
        version = take(1, "the format version")[0]
        if version not in (1, 2):
            raise StateError(f"malformed dsha sketch: format version {version} is not supported (this dsha reads 1 "
                             f"and 2)")
        code = varint(BY_ID[ALGORITHM].code)
        if take(len(code), "the algorithm") != code:
            raise StateError("malformed dsha sketch: its algorithm is not dsha-v1 (81 b4 f5 01)")
        if u32("the schema digest length") != 32:
            raise StateError("malformed dsha sketch: the schema digest is not 32 bytes")
        schema_digest = take(32, "the schema digest")
        rows = int(struct.unpack("<Q", take(8, "the row count"))[0])
        total = int.from_bytes(take(16, "the sum"), "little")
        m = u32("the cell count")
        if not valid_cells(m):
            raise StateError(f"malformed dsha sketch: {m} cells is not an allowed size (2^i or 3·2^i up to 2^24)")
        width = 6 if version == 2 else 5
        cell = np.frombuffer(take(8 * width * m, "the cells"), dtype="<u8").reshape(m, width).astype(np.uint64)
        columns = []
        n = u32("the column count")
        for _ in range(n):
            name = take(u32("a column name's length"), "a column name").decode("utf-8", "surrogatepass")
            columns.append(Column(name, take(32, "a column's schema digest"),
                                  int.from_bytes(take(16, "a column's sum"), "little")))
        text = take(u32("the schema length"), "the schema")
        if at != len(data):
            raise StateError(f"malformed dsha sketch: {len(data) - at} bytes after the end of the sketch")
        if hashlib.sha256(text).digest() != schema_digest:
            raise StateError("malformed dsha sketch: the schema text does not match its digest")
        return cls(text.decode("utf-8", "surrogatepass"), schema_digest, rows, total, cell[:, 0].copy(),
                   _limbs_of(np.ascontiguousarray(cell[:, 1:4])), cell[:, 4].copy(),
                   cell[:, 5].copy() if version == 2 else None, columns, n > 0)


@dataclass
class Difference:
    """The cells of ``left − right`` (SPEC.md §17.3): what a decode peels."""

    count: np.ndarray
    sums: np.ndarray
    check: np.ndarray
    filter: Optional[np.ndarray]

    @property
    def cells(self) -> int:
        return len(self.count)

    def fold(self, m: int) -> Difference:
        k = self.cells // m
        if k == 1:
            return self
        with np.errstate(over="ignore"):
            return Difference(_fold(self.count, k, m),
                              _carry(self.sums.reshape(k, m, _LIMBS).sum(axis=0, dtype=np.uint64)),
                              _fold(self.check, k, m), None if self.filter is None else _fold(self.filter, k, m))

    def zero_cells(self) -> int:
        """Cells whose count, sum and check are all zero (the filter is not looked at)."""
        return int(np.count_nonzero((self.count == 0) & (self.check == 0) & ~self.sums.any(axis=1)))

    def estimate(self) -> int:
        """About how many distinct digests differ (SPEC.md §17.4): ⌈−(m/3)·ln(max(z, 1/2)/m)⌉, at least 1."""
        m = self.cells
        return max(1, math.ceil(-(m / 3) * math.log(max(self.zero_cells(), 0.5) / m)))


@dataclass
class Decoded:
    """A decoded difference: ``entries`` maps each differing digest (16 bytes, as ``logical_hash`` gives it) to its
    signed count (positive: in excess on the left) and its rows' filter word (None unless ``filters_valid``)."""

    success: bool
    cells: int  # the size peeled
    entries: Dict[bytes, Tuple[int, Optional[int]]]
    filters_valid: bool
    estimate: Optional[int] = None  # when not decoded: sizes a retry


def decode(diff: Difference) -> Decoded:
    """Peels ``diff`` at its own size (SPEC.md §17.4)."""
    m = diff.cells
    count = [_signed(int(c), 64) for c in diff.count]
    words = _words_of(diff.sums)
    total = [_signed(int(a) | int(b) << 64 | int(c) << 128, 192) for a, b, c in words]
    check = [int(k) for k in diff.check]
    filters = None if diff.filter is None else [int(f) for f in diff.filter]
    found: Dict[int, List[int]] = {}  # x -> [sum of c, filter word or -1 unknown]
    known = filters is not None
    peels, limit = 0, 4 * m + 64
    pending = list(range(m))
    while pending:
        i = pending.pop()
        c_all, s = count[i], total[i]
        if c_all == 0 or s % c_all:
            continue
        x = s // c_all
        if not 0 <= x < 1 << 128 or (c_all * check_word(x)) & _M64 != check[i]:
            continue
        cells = _cells_of(x, m)
        mu = cells.count(i)
        if mu == 0 or c_all % mu:
            continue
        c = c_all // mu
        phi: Optional[int] = None
        if filters is not None:
            f = _signed(filters[i], 64)
            if abs(c_all) < 1 << 31 and f % c_all == 0 and 0 <= f // c_all < 1 << 32:
                phi = f // c_all
        peels += 1
        if peels > limit:
            break
        k = check_word(x)
        for j in cells:
            count[j] = _signed((count[j] - c) & _M64, 64)
            total[j] = _signed((total[j] - c * x) % (1 << 192), 192)
            check[j] = (check[j] - c * k) & _M64
            if filters is not None and phi is not None:
                filters[j] = (filters[j] - c * phi) & _M64
            pending.append(j)
        entry = found.setdefault(x, [0, -2])  # -2: no filter word seen yet
        entry[0] += c
        if phi is None or (entry[1] not in (-2, phi)):
            entry[1] = -1
            known = False
        else:
            entry[1] = phi
    success = peels <= limit and not any(count) and not any(total) and not any(check)
    if not success:
        return Decoded(False, m, {}, False, diff.estimate())
    valid = known and filters is not None and not any(filters)
    entries = {x.to_bytes(16, "little"): (n, phi if valid else None) for x, (n, phi) in sorted(found.items()) if n}
    return Decoded(True, m, dict(sorted(entries.items())), valid)


def decode_smallest(diff: Difference) -> Decoded:
    """Decodes at the smallest allowed fold that succeeds (SPEC.md §17.4); when none does, the failure at the full
    size, with its estimate of the number of differing digests."""
    for size in fold_sizes(diff.cells):
        result = decode(diff.fold(size))
        if result.success:
            return result
    return result
