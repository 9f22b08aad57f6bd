#!/usr/bin/env python3
"""Reference implementation of SPEC.md §17: sketches and differences (dsha_sketch), in plain Python, on top of the
v1 reference (canonical schema, row digests: dsha_reference.py).

Written from SPEC.md alone.  Public functions::

    cell_indices(x16, m) -> [i0, i1, i2]; check_word(x16) -> int       # §17.2
    value_word(t, v) -> int; filter_word(t, row) -> int                # §17.2.1 (t: ref.DType; row: JSON object)
    sketch_cells(items, m, filters=False) -> cells                    # §17.2; items (x16, c) or (x16, c, φ)
    sketch_bytes(schema_str, rows, m, columns=True, filters=True)     # §17.1 serialisation of a table's sketch
    serialise_sketch(schema_str, rows, total, cells, columns) -> bytes  # version 2, or 1 for cells without filter
    parse_sketch(bytes) -> dict                                       # versions 1 and 2; SketchError when malformed
    merge_sketches(a, b) -> bytes; fold_sketch(b, m') -> bytes        # §17.3 on serialised sketches
    fold(cells, m') ; merge_cells(a, b) ; subtract(a, b)              # §17.3 on cell lists (subtract: at the gcd)
    subtract_sketches(a_bytes, b_bytes) -> cells                      # schemas must agree
    decode(diff_cells) -> (success, {digest16: signed count})         # §17.4, at the size of diff_cells
    decode_with_filters(diff_cells) -> (success, {..}, {digest16: φ} or None)   # None: filter words not valid
    decode_smallest(diff_cells) -> (success, {..}, size or None)      # §17.4, smallest allowed fold that decodes
    decode_smallest_with_filters(diff_cells) -> (success, {..}, size or None, {digest16: φ} or None)
    estimate_d(diff_cells) -> float; estimate(diff_cells) -> int     # §17.4's estimate from the zero cells

Cells are lists [count, sum, check, filter] (format version 2), or [count, sum, check] for a sketch without filter
words (format version 1, or anything merged or subtracted with one: §17.1, §17.3); every field is reduced by its
modulus (2^64, 2^192, 2^64, 2^64).

Command line::

    python dsha_reference_sketch.py fill  tests/golden/vectors-sketch.json   # (re)writes the file
    python dsha_reference_sketch.py check tests/golden/vectors-sketch.json   # recomputes it; exit 1 on mismatch
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import struct
import sys
from typing import Dict, Iterable, List, Optional, Tuple

import dsha_reference as ref

MAGIC = b"DSHK"
FORMAT_VERSION = 2       # cells with filter words; a sketch without them is written as version 1 (§17.1)
FORMAT_VERSION_NO_FILTERS = 1
M64 = 1 << 64
M128 = 1 << 128
M192 = 1 << 192
MASK64 = M64 - 1
MAX_CELLS = 1 << 24
CELL_BYTES = {1: 40, 2: 48}   # by format version
MODULI = (M64, M192, M64, M64)  # count, sum, check, filter

G = 0x9E3779B97F4A7C15
CHECK_SALT = 0xD1B54A32D192ED03
NULL_WORD = 0x6A09E667F3BCC908


class SketchError(ValueError):
    """A byte string that is not a well-formed sketch, or sketches that do not merge or subtract."""


# -- §17.2 cells of a row digest -------------------------------------------------------------------------------

def mix(z: int) -> int:
    """SplitMix64's output function, on u64."""
    z &= MASK64
    z ^= z >> 30
    z = (z * 0xBF58476D1CE4E5B9) & MASK64
    z ^= z >> 27
    z = (z * 0x94D049BB133111EB) & MASK64
    z ^= z >> 31
    return z


def _words(x16: bytes) -> Tuple[int, int]:
    if len(x16) != 16:
        raise ValueError(f"a row digest has 16 bytes, not {len(x16)}")
    return int.from_bytes(x16[:8], "little"), int.from_bytes(x16[8:], "little")


def cell_indices(x16: bytes, m: int) -> List[int]:
    """cell_j(x) for j = 0, 1, 2."""
    lo, hi = _words(x16)
    seed = lo ^ ((hi * G) & MASK64)
    return [mix((seed + (j + 1) * G) & MASK64) % m for j in range(3)]


def check_word(x16: bytes) -> int:
    lo, hi = _words(x16)
    return mix(hi ^ mix(lo ^ CHECK_SALT))


def allowed_size(m: int) -> bool:
    """m is 2^i or 3·2^i and 1 <= m <= 2^24 (§17.1)."""
    if not isinstance(m, int) or isinstance(m, bool) or not 1 <= m <= MAX_CELLS:
        return False
    if m % 3 == 0:
        m //= 3
    return m & (m - 1) == 0


def _require_size(m: int):
    if not allowed_size(m):
        raise SketchError(f"a sketch has 2^i or 3·2^i cells, 1 <= m <= 2^24; not {m!r}")


def zero_cells(m: int, filters: bool = False) -> List[List[int]]:
    return [[0] * (4 if filters else 3) for _ in range(m)]


def has_filters(cells: List[List[int]]) -> bool:
    """Whether cells carry filter words (4 fields: format version 2) or not (3 fields: version 1)."""
    return len(cells[0]) == 4


def add_digest(cells: List[List[int]], x16: bytes, c: int, phi: Optional[int] = None):
    """Adds c occurrences (c may be negative) of the digest x16 to cells, in place (§17.2), and c·phi to their
    filter when phi is given (cells with filter words; §17.4 peels a digest of unknown φ without it)."""
    m = len(cells)
    x = int.from_bytes(x16, "little")
    chk = check_word(x16)
    for i in cell_indices(x16, m):
        cell = cells[i]
        cell[0] = (cell[0] + c) % M64
        cell[1] = (cell[1] + c * x) % M192
        cell[2] = (cell[2] + c * chk) % M64
        if phi is not None:
            cell[3] = (cell[3] + c * phi) % M64


def sketch_cells(items: Iterable[tuple], m: int, filters: bool = False) -> List[List[int]]:
    """The cells for row digests (16 bytes each) each added c times.  Without filters the items are (x16, c) and
    the cells [count, sum, check]; with filters they are (x16, c, φ) and the cells [count, sum, check, filter]."""
    _require_size(m)
    cells = zero_cells(m, filters)
    for item in items:
        if filters:
            x16, c, phi = item
            if not 0 <= phi < 1 << 32:
                raise ValueError(f"a filter word is a u32, not {phi!r}")
        else:
            (x16, c), phi = item, None
        add_digest(cells, bytes(x16), c, phi)
    return cells


# -- §17.2.1 filter word of a row -----------------------------------------------------------------------------

_INTEGER_KINDS = {"tinyint", "smallint", "int", "bigint", "date", "timestamp", "timestamp_ntz", "time",
                  "interval_ym", "interval_dt"}  # layouts i8 ... i64: the value itself
_LENGTH_KINDS = {"string", "collated", "binary"}
_ONE_KINDS = {"interval", "timestamp_nanos", "variant", "array", "map", "struct"}  # and decimal(p > 18)


def value_word(t: ref.DType, v) -> int:
    """v_i of §17.2.1 for a top-level value v (JSON, SPEC §10) of canonical type t, as a u64."""
    if v is None:
        return NULL_WORD
    ref.encode_value(t, v)  # the value must be one of its type (SPEC §2.3: never hash what cannot be encoded)
    k = t.kind
    if k == "boolean":
        return 1 if v else 0
    if k in _INTEGER_KINDS:
        return v % M64
    if k == "float":  # the u32 bits read as an i32, sign-extended
        return struct.unpack("<i", ref.float_bits(ref._float_value(v, "float")))[0] % M64
    if k == "double":
        return struct.unpack("<Q", ref.double_bits(ref._float_value(v, "double")))[0]
    if k == "decimal":
        return ref.decimal_unscaled(v, t.precision, t.scale) % M64 if t.precision <= 18 else 1
    if k in _LENGTH_KINDS:
        return len(bytes.fromhex(v)) if k == "binary" else len(v.encode("utf-8"))
    if k in _ONE_KINDS:
        return 1
    raise AssertionError(k)  # void values are always null (encode_value rejected the value)


def column_key(i: int) -> int:
    """K_i = mix((i + 1)·G) | 1."""
    return mix((i + 1) * G) | 1


def filter_word(t: ref.DType, row: dict) -> int:
    """φ of a row (a JSON object) of the canonical schema t (a struct type; §17.2.1): a u32."""
    if not isinstance(row, dict) or set(row) != {n for n, _ in t.fields}:
        raise ValueError(f"row {row!r} does not have the columns of {t.render()}")
    total = sum(column_key(i) * value_word(ft, row[name]) for i, (name, ft) in enumerate(t.fields))
    return mix(total % M64) >> 32


# -- §17.3 merge, fold, subtract on cells ---------------------------------------------------------------------

def _combine(a: List[int], b: List[int], sign: int) -> List[int]:
    """a + sign·b field by field; the filter only when both cells have one (§17.3)."""
    return [(p + sign * q) % mod for p, q, mod in zip(a, b, MODULI)]


def merge_cells(a: List[List[int]], b: List[List[int]]) -> List[List[int]]:
    if len(a) != len(b):
        raise SketchError(f"sketches of {len(a)} and {len(b)} cells do not merge (fold them first)")
    return [_combine(p, q, 1) for p, q in zip(a, b)]


def fold(cells: List[List[int]], m_new: int) -> List[List[int]]:
    """Cell i of the result is the sum of cells i, i + m', i + 2m', ... (§17.3)."""
    m = len(cells)
    _require_size(m)
    _require_size(m_new)
    if m % m_new:
        raise SketchError(f"a sketch of {m} cells does not fold to {m_new} cells ({m_new} does not divide {m})")
    out = zero_cells(m_new, has_filters(cells))
    for i, cell in enumerate(cells):
        out[i % m_new] = _combine(out[i % m_new], cell, 1)
    return out


def subtract(a: List[List[int]], b: List[List[int]]) -> List[List[int]]:
    """a − b, both folded to gcd(m_a, m_b) first (§17.3); with filter words only when both have them."""
    g = math.gcd(len(a), len(b))
    fa, fb = fold(a, g), fold(b, g)
    return [_combine(p, q, -1) for p, q in zip(fa, fb)]


# -- §17.4 decoding --------------------------------------------------------------------------------------------

def _signed(v: int, bits: int) -> int:
    return v - (1 << bits) if v >= 1 << (bits - 1) else v


def pure_digest(cells: List[List[int]], i: int) -> Optional[Tuple[bytes, int]]:
    """(x, c) if cell i is pure (§17.4), else None.  The filter field plays no part."""
    count, total, chk = cells[i][:3]
    C = _signed(count, 64)
    if C == 0:
        return None
    S = _signed(total, 192)
    if S % C:
        return None
    x = S // C
    if not 0 <= x < M128:
        return None
    x16 = x.to_bytes(16, "little")
    if (C * check_word(x16)) % M64 != chk:
        return None
    mu = cell_indices(x16, len(cells)).count(i)
    if mu == 0 or C % mu:
        return None
    return x16, C // mu


def pure_filter_word(cell: List[int]) -> Optional[int]:
    """φ = F / C of a pure cell when |C| < 2^31 and C divides F (read as i64) exactly and 0 <= φ < 2^32, else None:
    unknown (§17.4, "Filter words")."""
    C, F = _signed(cell[0], 64), _signed(cell[3], 64)
    if abs(C) >= 1 << 31 or F % C:
        return None
    phi = F // C
    return phi if 0 <= phi < 1 << 32 else None


def decode(diff_cells: List[List[int]]) -> Tuple[bool, Dict[bytes, int]]:
    """Peels a difference at its own size (§17.4).  Returns (success, {digest16: signed multiplicity}); on failure
    the dict holds what was peeled before decoding got stuck (the specification defines no result then)."""
    ok, entries, _ = decode_with_filters(diff_cells)
    return ok, entries


def decode_with_filters(diff_cells: List[List[int]]) -> Tuple[bool, Dict[bytes, int], Optional[Dict[bytes, int]]]:
    """decode, and the decoded filter words (§17.4, "Filter words"): {digest16: φ} for the digests of the entries
    when they are valid, None when they are not (cells without filter words, failure, an unknown φ, a filter left
    non-zero).  Filter words never change success or the entries."""
    cells = [list(c) for c in diff_cells]
    m = len(cells)
    _require_size(m)
    filters = has_filters(cells)
    found: Dict[bytes, int] = {}
    phis: Dict[bytes, Optional[int]] = {}
    pending = list(range(m))
    queued = [True] * m
    peels = 0
    # A safety bound against a (probability ~2^-64) false pure cell making peeling cycle; never reached in practice.
    limit = 8 * m + 64
    while pending and peels <= limit:
        i = pending.pop()
        queued[i] = False
        hit = pure_digest(cells, i)
        if hit is None:
            continue
        x16, c = hit
        peels += 1
        phi = pure_filter_word(cells[i]) if filters else None
        add_digest(cells, x16, -c, phi)
        found[x16] = found.get(x16, 0) + c
        # A digest peeled twice (only after a false check match) keeps a known φ only if both peels agree on it.
        phis[x16] = phi if phis.get(x16, phi) == phi else None
        for j in cell_indices(x16, m):
            if not queued[j]:
                queued[j] = True
                pending.append(j)
    success = all(cell[:3] == [0, 0, 0] for cell in cells)
    entries = {x: c for x, c in found.items() if c != 0}
    valid = (filters and success and None not in phis.values() and all(cell[3] == 0 for cell in cells))
    return success, entries, ({x: phis[x] for x in entries} if valid else None)


def fold_sizes(m: int) -> List[int]:
    """The allowed sizes dividing m, increasing."""
    _require_size(m)
    return [k for k in range(1, m + 1) if m % k == 0 and allowed_size(k)]


def decode_smallest(diff_cells: List[List[int]]) -> Tuple[bool, Dict[bytes, int], Optional[int]]:
    """Decodes at the smallest allowed fold that succeeds (§17.4): (success, entries, size that decoded or None)."""
    ok, entries, size, _ = decode_smallest_with_filters(diff_cells)
    return ok, entries, size


def decode_smallest_with_filters(diff_cells: List[List[int]]) \
        -> Tuple[bool, Dict[bytes, int], Optional[int], Optional[Dict[bytes, int]]]:
    """decode_smallest, and the filter words decoded at that size ({digest16: φ}, or None when not valid)."""
    m = len(diff_cells)
    for k in fold_sizes(m):
        ok, entries, filters = decode_with_filters(fold(diff_cells, k))
        if ok:
            return True, entries, k, filters
    ok, entries, _ = decode_with_filters(diff_cells)
    return False, entries, None, None


def estimate_d(diff_cells: List[List[int]]) -> float:
    """§17.4: d ≈ −(m/3)·ln(z/m) from the number z of zero cells (count, sum and check zero; the filter is not
    one of §17.4's "three fields").  With no zero cell SPEC says z = 1/2."""
    m = len(diff_cells)
    z = sum(1 for c in diff_cells if list(c[:3]) == [0, 0, 0])
    return -(m / 3) * math.log(max(z, 0.5) / m)


def estimate(diff_cells: List[List[int]]) -> int:
    """§17.4: the estimate dsha_sketch_diff reports, estimate_d rounded up to an integer (binary64 arithmetic), over
    the difference as subtracted (m: the gcd of both sketches' sizes, before any fold)."""
    return math.ceil(estimate_d(diff_cells))


# -- tables: row digests, columns (§17.1) ----------------------------------------------------------------------

def _schema(schema_str: str):
    t = ref.parse_schema(schema_str)
    canon = t.render()
    return t, canon, hashlib.sha256(canon.encode("utf-8")).digest()


def column_schema(t: ref.DType, name: str) -> str:
    """The canonical schema of the one-column table of column `name` of schema t."""
    ft = dict(t.fields)[name]
    return ref.DType("struct", fields=[(name, ft)]).render()


def row_digests(schema_str: str, rows: list) -> List[bytes]:
    t, canon, sd = _schema(schema_str)
    return [ref.murmur3_x64_128(sd + ref.row_bytes(t, r)) for r in rows]


def row_filter_words(schema_str: str, rows: list) -> List[int]:
    """φ of each row (§17.2.1)."""
    t, _, _ = _schema(schema_str)
    return [filter_word(t, r) for r in rows]


def column_parts(schema_str: str, rows: list) -> List[Tuple[str, bytes, int]]:
    """(name, one-column schema digest, one-column sum) per column, in canonical order."""
    t, _, _ = _schema(schema_str)
    out = []
    for name, ft in t.fields:
        one = column_schema(t, name)
        one_t = ref.parse_schema(one)
        sd = hashlib.sha256(one.encode("utf-8")).digest()
        total = 0
        for r in rows:
            if not isinstance(r, dict) or name not in r:
                raise ValueError(f"row {r!r} has no column {name!r}")
            total += int.from_bytes(ref.murmur3_x64_128(sd + ref.row_bytes(one_t, {name: r[name]})), "little")
        out.append((name, sd, total % M128))
    return out


def serialise_sketch(schema_str: str, rows: int, total: int, cells: List[List[int]],
                     columns: List[Tuple[str, bytes, int]]) -> bytes:
    """§17.1 from its parts; `columns` is [] or (name, schema digest, sum) per column in canonical order.  Cells
    with filter words are written as format version 2, cells without as version 1."""
    _, canon, sd = _schema(schema_str)
    _require_size(len(cells))
    filters = has_filters(cells)
    if any(len(cell) != len(cells[0]) for cell in cells):
        raise ValueError("cells with and without filter words in one sketch")
    version = FORMAT_VERSION if filters else FORMAT_VERSION_NO_FILTERS
    text = canon.encode("utf-8")
    out = bytearray(MAGIC + bytes([version]) + ref.varint(ref.MULTIHASH_CODE))
    out += struct.pack("<I", 32) + sd + struct.pack("<Q", rows % M64) + (total % M128).to_bytes(16, "little")
    out += struct.pack("<I", len(cells))
    for cell in cells:
        out += (cell[0] % M64).to_bytes(8, "little") + (cell[1] % M192).to_bytes(24, "little") \
            + (cell[2] % M64).to_bytes(8, "little")
        if filters:
            out += (cell[3] % M64).to_bytes(8, "little")
    out += struct.pack("<I", len(columns))
    for name, csd, csum in columns:
        nb = name.encode("utf-8")
        out += struct.pack("<I", len(nb)) + nb + csd + (csum % M128).to_bytes(16, "little")
    out += struct.pack("<I", len(text)) + text
    return bytes(out)


def sketch_bytes(schema_str: str, rows: list, m: int, columns: bool = True, filters: bool = True) -> bytes:
    """The sketch (§17.1) of a table given by its canonical schema and rows (JSON, SPEC §10): format version 2, or
    version 1 (no filter words) with filters=False."""
    digests = row_digests(schema_str, rows)
    if filters:
        cells = sketch_cells(zip(digests, [1] * len(rows), row_filter_words(schema_str, rows)), m, filters=True)
    else:
        cells = sketch_cells(((d, 1) for d in digests), m)
    total = sum(int.from_bytes(d, "little") for d in digests) % M128
    cols = column_parts(schema_str, rows) if columns else []
    return serialise_sketch(schema_str, len(rows), total, cells, cols)


def parse_sketch(data: bytes) -> dict:
    """The fields of a serialised sketch; SketchError saying what is wrong if it is malformed."""
    data = bytes(data)
    pos = 0

    def take(n: int, what: str) -> bytes:
        nonlocal pos
        if pos + n > len(data):
            raise SketchError(f"truncated: {what} needs {n} bytes at offset {pos} of {len(data)}")
        out = data[pos:pos + n]
        pos += n
        return out

    def u32_field(what: str) -> int:
        return struct.unpack("<I", take(4, what))[0]

    if take(4, "the magic") != MAGIC:
        raise SketchError("bad magic (not a sketch)")
    version = take(1, "the format version")[0]
    if version not in CELL_BYTES:
        raise SketchError(f"unsupported sketch format version {version}")
    cell_bytes = CELL_BYTES[version]
    code, shift, raw = 0, 0, b""
    while True:
        b = take(1, "the algorithm code")[0]
        raw += bytes([b])
        code |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            break
    if raw != ref.varint(code):
        raise SketchError("the algorithm code is not a minimal varint")
    if code != ref.MULTIHASH_CODE:
        raise SketchError(f"unknown algorithm code {code:#x} (a sketch holds dsha-v1 row digests, 0x3d5a01)")
    if u32_field("the schema digest length") != 32:
        raise SketchError("the schema digest of a sketch has 32 bytes")
    sd = take(32, "the schema digest")
    rows = struct.unpack("<Q", take(8, "the row count"))[0]
    total = int.from_bytes(take(16, "the sum"), "little")
    m = u32_field("the cell count")
    if not allowed_size(m):
        raise SketchError(f"cell count {m} is not 2^i or 3·2^i between 1 and 2^24")
    if len(data) - pos < cell_bytes * m:
        raise SketchError(f"truncated: {m} cells need {cell_bytes * m} bytes at offset {pos} of {len(data)}")
    cells = []
    for _ in range(m):
        raw_cell = take(cell_bytes, "a cell")
        # count, sum, check and (version 2) filter; a version 1 sketch has no filter words (§17.1).
        cells.append([int.from_bytes(raw_cell[a:b], "little") for a, b in ((0, 8), (8, 32), (32, 40), (40, 48))
                      if b <= cell_bytes])
    n = u32_field("the column count")
    columns = []
    for k in range(n):
        name_raw = take(u32_field(f"the length of column name {k}"), f"column name {k}")
        try:
            name = name_raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise SketchError(f"column name {k} is not valid UTF-8: {e}") from None
        csd = take(32, f"the schema digest of column {name!r}")
        csum = int.from_bytes(take(16, f"the sum of column {name!r}"), "little")
        columns.append((name, csd, csum))
    text = take(u32_field("the schema length"), "the schema")
    if pos != len(data):
        raise SketchError(f"{len(data) - pos} bytes after the schema")
    if hashlib.sha256(text).digest() != sd:
        raise SketchError("the schema text does not match its digest")
    try:
        schema = text.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SketchError(f"the schema is not valid UTF-8: {e}") from None
    if columns:
        # Not listed as a reader rule by SPEC §17.1, but implied by its definition of the columns.
        try:
            t = ref.parse_schema(schema)
        except ref.SchemaError as e:
            raise SketchError(f"the schema is not a canonical schema: {e}") from None
        expected = [(nm, hashlib.sha256(column_schema(t, nm).encode("utf-8")).digest()) for nm, _ in t.fields]
        if [(nm, d) for nm, d, _ in columns] != expected:
            raise SketchError("the columns are not the schema's columns in canonical order with their schema digests")
    return {"version": version, "schema": schema, "schema_digest": sd, "rows": rows, "sum": total, "m": m,
            "cells": cells, "filters": version == FORMAT_VERSION, "columns": columns}


def _same_schema(x: dict, y: dict):
    if x["schema_digest"] != y["schema_digest"]:
        raise SketchError(f"sketches of different schemas: {x['schema']} and {y['schema']}")


def merge_sketches(a: bytes, b: bytes) -> bytes:
    """§17.3 merge of two serialised sketches (same schema and m; columns present in both or in neither).  The
    result has filter words (version 2) only when both have them, else it is written as version 1."""
    x, y = parse_sketch(a), parse_sketch(b)
    _same_schema(x, y)
    if x["m"] != y["m"]:
        raise SketchError(f"sketches of {x['m']} and {y['m']} cells do not merge (fold them first)")
    if bool(x["columns"]) != bool(y["columns"]):
        raise SketchError("a sketch with column digests and one without do not merge")  # SPEC is silent here
    cols = [(n, d, s + t) for (n, d, s), (_, _, t) in zip(x["columns"], y["columns"])]
    return serialise_sketch(x["schema"], x["rows"] + y["rows"], x["sum"] + y["sum"],
                            merge_cells(x["cells"], y["cells"]), cols)


def fold_sketch(data: bytes, m_new: int) -> bytes:
    x = parse_sketch(data)
    return serialise_sketch(x["schema"], x["rows"], x["sum"], fold(x["cells"], m_new), x["columns"])


def subtract_sketches(a: bytes, b: bytes) -> List[List[int]]:
    """The difference cells a − b (at the gcd of their sizes) of two serialised sketches of one schema."""
    x, y = parse_sketch(a), parse_sketch(b)
    _same_schema(x, y)
    return subtract(x["cells"], y["cells"])


# -- golden vectors (SPEC §17.6) -------------------------------------------------------------------------------

# 'sketches' holds every table of vectors.json, in its order (SPEC §17.6: every type gives its rows' filter words).
FOLD_VECTOR = "table_with_duplicates"
VERSION1_VECTORS = ["columns_ab", "table_with_duplicates", "table_empty"]


def _range_rows(lo: int, hi: int) -> list:
    return [{"id": i} for i in range(lo, hi)]


def _dec(v: str) -> str:
    return f"CAST('{v}' AS DECIMAL(10,2))" if v is not None else "CAST(NULL AS DECIMAL(10,2))"


# The difference pairs: inputs only; `fill` computes the rest.
DIFFERENCES = [
    {"name": "duplicates_3_vs_1",
     "_note": "(1, 'a') three times on the left, once on the right: +2; (2, NULL) on both sides cancels",
     "sql_left": "SELECT * FROM VALUES (1, 'a'), (1, 'a'), (2, NULL), (1, 'a') AS t(id, s)",
     "sql_right": "SELECT * FROM VALUES (2, NULL), (1, 'a') AS t(id, s)",
     "schema": 'struct<"id":int,"s":string>',
     "rows_left": [{"id": 1, "s": "a"}, {"id": 1, "s": "a"}, {"id": 2, "s": None}, {"id": 1, "s": "a"}],
     "rows_right": [{"id": 2, "s": None}, {"id": 1, "s": "a"}],
     "m": 6},
    {"name": "right_only_and_changed",
     "_note": "(3, NULL) only on the right: -1; row 2 changed from -3.00 to -3.01: +1 and -1",
     "sql_left": f"SELECT * FROM VALUES (1L, {_dec('10.50')}), (2L, {_dec('-3.00')}) AS t(id, amount)",
     "sql_right": f"SELECT * FROM VALUES (1L, {_dec('10.50')}), (2L, {_dec('-3.01')}), (3L, {_dec(None)})"
                  " AS t(id, amount)",
     "schema": 'struct<"amount":decimal(10,2),"id":bigint>',
     "rows_left": [{"id": 1, "amount": "10.50"}, {"id": 2, "amount": "-3.00"}],
     "rows_right": [{"id": 1, "amount": "10.50"}, {"id": 2, "amount": "-3.01"}, {"id": 3, "amount": None}],
     "m": 12},
    {"name": "identical",
     "_note": "the same rows in another order, -0.0 against 0.0 (normalised alike): the empty difference, "
              "decoded at size 1",
     "sql_left": "SELECT * FROM VALUES (1.5D, array('x', 'y')), (CAST('NaN' AS DOUBLE), CAST(NULL AS ARRAY<STRING>)),"
                 " (CAST('-0.0' AS DOUBLE), CAST(array() AS ARRAY<STRING>)) AS t(d, tags)",
     "sql_right": "SELECT * FROM VALUES (0.0D, CAST(array() AS ARRAY<STRING>)), (1.5D, array('x', 'y')),"
                  " (CAST('NaN' AS DOUBLE), CAST(NULL AS ARRAY<STRING>)) AS t(d, tags)",
     "schema": 'struct<"d":double,"tags":array<string>>',
     "rows_left": [{"d": 1.5, "tags": ["x", "y"]}, {"d": "NaN", "tags": None}, {"d": "-0.0", "tags": []}],
     "rows_right": [{"d": 0.0, "tags": []}, {"d": 1.5, "tags": ["x", "y"]}, {"d": "NaN", "tags": None}],
     "m": 6},
    {"name": "multiplicities",
     "_note": "counts where the division by the cell count matters: (1) +4, (3) -6, (5) +2, (7) -1",
     "sql_left": "SELECT * FROM VALUES (1), (1), (1), (1), (3), (5), (5), (5) AS t(n)",
     "sql_right": "SELECT * FROM VALUES (3), (3), (3), (3), (3), (3), (3), (5), (7) AS t(n)",
     "schema": 'struct<"n":int>',
     "rows_left": [{"n": 1}] * 4 + [{"n": 3}] + [{"n": 5}] * 3,
     "rows_right": [{"n": 3}] * 7 + [{"n": 5}] + [{"n": 7}],
     "m": 12},
    {"name": "empty_left",
     "_note": "the empty table minus two rows: both -1",
     "sql_left": "SELECT * FROM VALUES (1, 'a') AS t(id, s) WHERE id < 0",
     "sql_right": "SELECT * FROM VALUES (1, 'a'), (2, 'b') AS t(id, s)",
     "schema": 'struct<"id":int,"s":string>',
     "rows_left": [],
     "rows_right": [{"id": 1, "s": "a"}, {"id": 2, "s": "b"}],
     "m": 4},
    {"name": "too_large_for_m",
     "_note": "30 differing rows (ids 0-19 left only, 30-39 right only) do not decode at 8 cells",
     "sql_left": "SELECT id FROM range(0, 30)",
     "sql_right": "SELECT id FROM range(20, 40)",
     "schema": 'struct<"id":bigint>',
     "rows_left": _range_rows(0, 30),
     "rows_right": _range_rows(20, 40),
     "m": 8},
    {"name": "large_enough_at_96",
     "_note": "the pair of too_large_for_m with 96 cells: decodes, at the smallest size that succeeds",
     "sql_left": "SELECT id FROM range(0, 30)",
     "sql_right": "SELECT id FROM range(20, 40)",
     "schema": 'struct<"id":bigint>',
     "rows_left": _range_rows(0, 30),
     "rows_right": _range_rows(20, 40),
     "m": 96},
    {"name": "gcd_12_and_8",
     "_note": "a 12-cell sketch minus an 8-cell sketch: both fold to gcd 4; map entry order does not matter, "
              "a NULL map is not an empty map",
     "sql_left": "SELECT * FROM VALUES ('a', map('x', 1)), ('b', map('x', 1, 'y', 2)),"
                 " ('c', CAST(NULL AS MAP<STRING, INT>)) AS t(k, m)",
     "sql_right": "SELECT * FROM VALUES ('a', map('x', 1)), ('b', map('y', 2, 'x', 1)),"
                  " ('c', CAST(map() AS MAP<STRING, INT>)) AS t(k, m)",
     "schema": 'struct<"k":string,"m":map<string,int>>',
     "rows_left": [{"k": "a", "m": [["x", 1]]}, {"k": "b", "m": [["x", 1], ["y", 2]]}, {"k": "c", "m": None}],
     "rows_right": [{"k": "a", "m": [["x", 1]]}, {"k": "b", "m": [["y", 2], ["x", 1]]}, {"k": "c", "m": []}],
     "m_left": 12, "m_right": 8},
]

DOC = (
    "SPEC.md §17.6: sketches (§17.1 bytes, hex) and decoded differences (§17.4), written by "
    "tests/reference/dsha_reference_sketch.py fill and re-checked by its check command. Every sketch is format "
    "version 2 (48-byte cells with filter words, §17.2.1) except those of 'version1'. "
    "'sketches': every table of vectors.json, in its order (name, sql, schema, rows as there); sketch_m6 is the "
    "sketch with 6 cells and column digests, sketch_m1_no_columns with 1 cell and column count 0; decode is the "
    "decoding of sketch_m6 minus the empty sketch (0 rows) of the same schema at 6 cells, at the smallest fold that succeeds: success, "
    "cells_used (that size), entries {row digest hex in byte order (as row_digests in vectors.json): signed count}, "
    "filters_valid (whether the decoded filter words are valid, §17.4 'Filter words') and, only when filters_valid "
    "is true, filters {row digest hex: the filter word φ of its rows, a u32 as an integer} for the digests of "
    "entries. "
    "'differences': left/right tables (sql_left, sql_right produce them; schema, rows_left, rows_right as in "
    "vectors.json), sketched with columns at m cells (or m_left and m_right cells, subtracted at their gcd), "
    "decoded left − right: decode_at_size is peeling at the difference's own size (m or the gcd) without folding, "
    "decode is at the smallest allowed fold that succeeds (cells_used null when none does; filters are those "
    "decoded at cells_used); entries are given only when success is true, filters only when filters_valid is true. "
    "'fold': one table sketched at 12 cells (with columns) and that sketch folded to 3 and 4 "
    "cells, which equal the sketches made directly at 3 and 4 cells. "
    "'version1': tables of vectors.json (name, sql, schema, rows) with sketch_m6, their sketch at 6 cells with "
    "column digests written as format version 1 (40-byte cells: count, sum, check; no filter words), which readers "
    "must still read; merged_with_v2, sketch_m6 merged with the table's version 2 sketch at 6 cells (the sketch of "
    "the table twice, without filter words, hence version 1); decode, sketch_m6 minus the empty version 2 sketch "
    "of the schema at 6 cells, decoded as in 'sketches' (the same entries; filters_valid false: no filter words)."
)


def _entries_json(entries: Dict[bytes, int]) -> dict:
    return {x.hex(): c for x, c in sorted(entries.items())}


def _filters_json(out: dict, filters: Optional[Dict[bytes, int]]) -> dict:
    out["filters_valid"] = filters is not None
    if filters is not None:
        out["filters"] = {x.hex(): phi for x, phi in sorted(filters.items())}
    return out


def _decode_json(cells: List[List[int]]) -> dict:
    ok, entries, size, filters = decode_smallest_with_filters(cells)
    out = {"success": ok, "cells_used": size}
    if ok:
        out["entries"] = _entries_json(entries)
    return _filters_json(out, filters)


def _decode_at_size_json(cells: List[List[int]]) -> dict:
    ok, entries, filters = decode_with_filters(cells)
    out = {"size": len(cells), "success": ok}
    if ok:
        out["entries"] = _entries_json(entries)
    return _filters_json(out, filters)


def _multiset_difference(schema: str, left: list, right: list) -> Dict[bytes, int]:
    diff: Dict[bytes, int] = {}
    for d in row_digests(schema, left):
        diff[d] = diff.get(d, 0) + 1
    for d in row_digests(schema, right):
        diff[d] = diff.get(d, 0) - 1
    return {x: c for x, c in diff.items() if c}


def compute_sketch_vector(v: dict) -> dict:
    schema, rows = v["schema"], v["rows"]
    s6 = sketch_bytes(schema, rows, 6, columns=True)
    empty6 = sketch_bytes(schema, [], 6, columns=True)
    return {"name": v["name"], "sql": v["sql"], "schema": schema, "rows": rows,
            "sketch_m6": s6.hex(),
            "sketch_m1_no_columns": sketch_bytes(schema, rows, 1, columns=False).hex(),
            "decode": _decode_json(subtract_sketches(s6, empty6))}


def compute_difference(v: dict) -> dict:
    out = {k: v[k] for k in v if not k.startswith("expected_") and k not in
           ("sketch_left", "sketch_right", "decode", "decode_at_size")}
    ml, mr = (v["m"], v["m"]) if "m" in v else (v["m_left"], v["m_right"])
    left = sketch_bytes(v["schema"], v["rows_left"], ml)
    right = sketch_bytes(v["schema"], v["rows_right"], mr)
    cells = subtract_sketches(left, right)
    out["sketch_left"] = left.hex()
    out["sketch_right"] = right.hex()
    out["decode_at_size"] = _decode_at_size_json(cells)
    out["decode"] = _decode_json(cells)
    return out


def compute_version1_vector(v: dict) -> dict:
    schema, rows = v["schema"], v["rows"]
    s6 = sketch_bytes(schema, rows, 6, columns=True, filters=False)
    empty6 = sketch_bytes(schema, [], 6, columns=True)
    return {"name": v["name"], "sql": v["sql"], "schema": schema, "rows": rows,
            "sketch_m6": s6.hex(),
            "merged_with_v2": merge_sketches(s6, sketch_bytes(schema, rows, 6, columns=True)).hex(),
            "decode": _decode_json(subtract_sketches(s6, empty6))}


def compute_fold(v: dict) -> dict:
    s12 = sketch_bytes(v["schema"], v["rows"], 12)
    return {"name": v["name"], "schema": v["schema"], "rows": v["rows"], "sketch_m12": s12.hex(),
            "folded_m3": fold_sketch(s12, 3).hex(), "folded_m4": fold_sketch(s12, 4).hex()}


def _filter_words_by_digest(schema: str, rows: list) -> Dict[str, int]:
    """{row digest hex: φ} over rows (rows of one digest have one φ)."""
    return {d.hex(): phi for d, phi in zip(row_digests(schema, rows), row_filter_words(schema, rows))}


def _filters_problem(decoded: dict, phis: Dict[str, int]) -> bool:
    """Whether a decode of version 2 sketches lacks valid filter words or has other ones than the rows'."""
    if decoded["filters_valid"] != decoded["success"]:
        return True
    return decoded["success"] and decoded["filters"] != {d: phis[d] for d in decoded["entries"]}


def _self_check(doc: dict) -> List[str]:
    """Invariants the file must satisfy beyond reproducing it: decodes equal the true multiset differences,
    decoded filter words are valid and those of the rows, folds equal direct sketches, every sketch parses (and
    has its format version), version 1 cells are the version 2 cells without the filter."""
    problems = []
    for v in doc["sketches"]:
        truth = _multiset_difference(v["schema"], v["rows"], [])
        for f in ("sketch_m6", "sketch_m1_no_columns"):
            if parse_sketch(bytes.fromhex(v[f]))["version"] != FORMAT_VERSION:
                problems.append(f"sketches/{v['name']}: {f} is not format version {FORMAT_VERSION}")
        if not v["decode"]["success"] or v["decode"]["entries"] != _entries_json(truth):
            problems.append(f"sketches/{v['name']}: decode is not every row digest with its multiplicity")
        elif _filters_problem(v["decode"], _filter_words_by_digest(v["schema"], v["rows"])):
            problems.append(f"sketches/{v['name']}: decode's filters are not valid or not the rows' filter words")
    for v in doc["differences"]:
        truth = _entries_json(_multiset_difference(v["schema"], v["rows_left"], v["rows_right"]))
        phis = _filter_words_by_digest(v["schema"], v["rows_left"] + v["rows_right"])
        for f in ("decode", "decode_at_size"):
            if v[f]["success"] and v[f]["entries"] != truth:
                problems.append(f"differences/{v['name']}: {f} is not the multiset difference")
            elif _filters_problem(v[f], phis):
                problems.append(f"differences/{v['name']}: {f} has filters not valid or not the rows' filter words")
    for v in doc.get("version1", []):
        where = f"version1/{v['name']}"
        s1 = parse_sketch(bytes.fromhex(v["sketch_m6"]))
        s2 = parse_sketch(sketch_bytes(v["schema"], v["rows"], 6))
        merged = parse_sketch(bytes.fromhex(v["merged_with_v2"]))
        if s1["version"] != 1 or s1["filters"] or s1["cells"] != [c[:3] for c in s2["cells"]]:
            problems.append(f"{where}: sketch_m6 is not the version 2 sketch without filter words, as version 1")
        if merged["version"] != 1 or v["merged_with_v2"] != sketch_bytes(v["schema"], v["rows"] * 2, 6,
                                                                         filters=False).hex():
            problems.append(f"{where}: merged_with_v2 is not the version 1 sketch of the table twice")
        truth = _entries_json(_multiset_difference(v["schema"], v["rows"], []))
        if v["decode"] != {"success": True, "cells_used": v["decode"]["cells_used"], "entries": truth,
                           "filters_valid": False}:
            problems.append(f"{where}: decode is not every row digest with its multiplicity, without filter words")
    f = doc["fold"]
    for k in (3, 4):
        if f[f"folded_m{k}"] != sketch_bytes(f["schema"], f["rows"], k).hex():
            problems.append(f"fold: folded_m{k} is not the sketch made at {k} cells")
    return problems


def build(vectors_path: str) -> dict:
    with open(vectors_path, encoding="utf-8") as fh:
        vectors = {v["name"]: v for v in json.load(fh)["vectors"]}
    return {"_doc": DOC, "algorithm": ref.ALGORITHM,
            "sketches": [compute_sketch_vector(v) for v in vectors.values()],
            "differences": [compute_difference(d) for d in DIFFERENCES],
            "fold": compute_fold(vectors[FOLD_VECTOR]),
            "version1": [compute_version1_vector(vectors[n]) for n in VERSION1_VECTORS]}


def _vectors_json_next_to(path: str) -> str:
    return os.path.join(os.path.dirname(os.path.abspath(path)), "vectors.json")


def cmd_fill(path: str) -> int:
    doc = build(_vectors_json_next_to(path))
    problems = _self_check(doc)
    for p in problems:
        print(f"PROBLEM {p}", file=sys.stderr)
    text = json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    print(f"{len(doc['sketches'])} sketches, {len(doc['differences'])} differences, a fold and "
          f"{len(doc['version1'])} version 1 sketches written to {path}")
    return 1 if problems else 0


def check_doc(doc: dict, vectors: Optional[Dict[str, dict]] = None) -> List[str]:
    """Every mismatch between the file's expected values and what this reference computes from its inputs."""
    problems = []

    def compare(where: str, expected: dict, actual: dict):
        for k, v in expected.items():
            if k not in actual:
                problems.append(f"{where}: unexpected field {k}")
            elif actual[k] != v:
                problems.append(f"{where}: {k} differs")
        for k in actual:
            if k not in expected:
                problems.append(f"{where}: missing field {k}")

    def same_source(where: str, v: dict):
        """The table is the one of vectors.json of that name (when given)."""
        if vectors is not None:
            src = vectors.get(v["name"])
            if src is None or any(src[k] != v[k] for k in ("sql", "schema", "rows")):
                problems.append(f"{where}: sql/schema/rows differ from vectors.json")

    if vectors is not None and [v.get("name") for v in doc["sketches"]] != list(vectors):
        problems.append("sketches: not every table of vectors.json, in its order (SPEC §17.6)")
    for v in doc["sketches"]:
        where = f"sketches/{v.get('name')}"
        try:
            compare(where, v, compute_sketch_vector(v))
            same_source(where, v)
        except Exception as e:  # noqa: BLE001 - report any failure of the reference itself
            problems.append(f"{where}: error: {type(e).__name__}: {e}")
    for v in doc["differences"]:
        where = f"differences/{v.get('name')}"
        try:
            compare(where, v, compute_difference(v))
            cells = subtract(parse_sketch(bytes.fromhex(v["sketch_left"]))["cells"],
                             parse_sketch(bytes.fromhex(v["sketch_right"]))["cells"])
            if _decode_json(cells) != v["decode"]:
                problems.append(f"{where}: decoding the stored sketches does not give decode")
        except Exception as e:  # noqa: BLE001
            problems.append(f"{where}: error: {type(e).__name__}: {e}")
    try:
        compare("fold", doc["fold"], compute_fold(doc["fold"]))
    except Exception as e:  # noqa: BLE001
        problems.append(f"fold: error: {type(e).__name__}: {e}")
    if "version1" not in doc:
        problems.append("version1: missing")
    for v in doc.get("version1", []):
        where = f"version1/{v.get('name')}"
        try:
            compare(where, v, compute_version1_vector(v))
            same_source(where, v)
            # Read the stored version 1 bytes (not only recompute them): they decode as decode says.
            empty = sketch_bytes(v["schema"], [], 6)
            if _decode_json(subtract_sketches(bytes.fromhex(v["sketch_m6"]), empty)) != v["decode"]:
                problems.append(f"{where}: decoding the stored sketch_m6 does not give decode")
        except Exception as e:  # noqa: BLE001
            problems.append(f"{where}: error: {type(e).__name__}: {e}")
    try:
        problems += _self_check(doc)
    except Exception as e:  # noqa: BLE001
        problems.append(f"invariants: error: {type(e).__name__}: {e}")
    return problems


def cmd_check(path: str) -> int:
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    vectors = None
    if os.path.exists(_vectors_json_next_to(path)):
        with open(_vectors_json_next_to(path), encoding="utf-8") as fh:
            vectors = {v["name"]: v for v in json.load(fh)["vectors"]}
    problems = check_doc(doc, vectors)
    for p in problems:
        print(f"MISMATCH {p}", file=sys.stderr)
    print(f"{len(doc['sketches'])} sketches, {len(doc['differences'])} differences, a fold and "
          f"{len(doc.get('version1', []))} version 1 sketches checked, {len(problems)} mismatches")
    return 1 if problems else 0


def main(argv: List[str]) -> int:
    if len(argv) == 2 and argv[0] == "check":
        return cmd_check(argv[1])
    if len(argv) == 2 and argv[0] == "fill":
        return cmd_fill(argv[1])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
