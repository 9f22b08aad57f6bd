#!/usr/bin/env python3
"""Independent reference implementation of the dsha algorithm v1 (SPEC.md).

Written from SPEC.md alone, in plain Python (standard library plus ``mmh3``).  It is deliberately simple and
strict: anything the specification does not define is rejected with an error rather than guessed.

Public functions::

    canonical_schema(schema_str) -> str          # parse and re-render (struct fields in canonical order)
    schema_digest(schema_str) -> bytes           # 32 bytes, SHA-256 of the canonical schema (SPEC §2)
    row_digest(schema_str, row) -> bytes         # 16 bytes (SPEC §4)
    table_digest(schema_str, rows) -> dict       # digest, rows, schema_digest (hex), content_sum (hex)
    serialise_state / parse_state / merge_states / finalise_state   # digest states (SPEC §11)
    load_manifest(bytes) -> dict; manifest_checksum(doc) -> str     # file manifests (SPEC §12.1, §12.2)
    check_manifest(doc, ...) -> dict             # every §12.3 rule about one manifest; merged state and digest
    meta_digest_files(schema_str, [(qualified_path, size, modified_ms, etag)]) -> str   # dsha-meta-v1 (SPEC §13)
    meta_digest_delta(schema_str, table_id, data_version) -> str    # dsha-meta-v1 of a Delta version (SPEC §13.1)
    delta_data_version(commits, v) -> int        # the data version of a Delta table version (SPEC §13.1)

Rows are JSON values with the conventions of SPEC §10.

Command line::

    python dsha_reference.py check tests/golden/vectors.json
    python dsha_reference.py fill  tests/golden/vectors.json [NAME ...]   # only the named vectors, if given
    python dsha_reference.py manifest DIR/_dsha/manifest.json   # check a manifest; print its files' merged digest
    python dsha_reference.py meta DIR SCHEMA     # dsha-meta-v1 of a local directory's data files (SPEC §13)

A vector's ``arguments`` (the SQL argument list of its dsha call, SPEC §10) needs no evaluation here: its ``schema``
and ``rows`` are already the columns the arguments give.
"""

from __future__ import annotations

import decimal
import hashlib
import json
import math
import re
import struct
import sys
from dataclasses import dataclass, field
from typing import Any, List, Optional, Tuple

import mmh3

ALGORITHM = "dsha-v1"
MULTIHASH_CODE = 0x3D5A01
MOD128 = 1 << 128

# --------------------------------------------------------------------------------------------------------------
# Primitive helpers
# --------------------------------------------------------------------------------------------------------------


def murmur3_x64_128(data: bytes) -> bytes:
    """MurmurHash3_x64_128, seed 0; h1 little-endian then h2 little-endian (SPEC §4.1)."""
    return mmh3.hash_bytes(bytes(data), 0, x64arch=True)


def u128_of(digest16: bytes) -> int:
    """A 16-byte digest read as an unsigned 128-bit integer: h1 + 2^64 * h2 (SPEC §4.2)."""
    assert len(digest16) == 16
    return int.from_bytes(digest16, "little")


def u128_bytes(x: int) -> bytes:
    return (x % MOD128).to_bytes(16, "little")


def varint(n: int) -> bytes:
    """Multiformats unsigned varint (LEB128)."""
    if n < 0:
        raise ValueError("varint of a negative number")
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def name_key(name: str) -> bytes:
    """Sort key of the canonical order (SPEC §2.2): UTF-8 bytes, unsigned, lexicographic."""
    return name.encode("utf-8")


def escape_surrogates(name: str) -> str:
    """The name with each lone surrogate written \\uXXXX, upper-case hex (SPEC §2.1's error text)."""
    return "".join(f"\\u{ord(c):04X}" if 0xD800 <= ord(c) <= 0xDFFF else c for c in name)


def check_name(name: str, path: str) -> None:
    """SPEC §2.1: a name holding a lone UTF-16 surrogate has no UTF-8 encoding and is refused, never replaced."""
    if any(0xD800 <= ord(c) <= 0xDFFF for c in name):
        raise SchemaError(f"column {escape_surrogates(path)}: the name {escape_surrogates(name)} is not valid "
                          f"Unicode (a lone UTF-16 surrogate, which has no UTF-8 encoding)")


def quote_name(name: str) -> str:
    """Quoted name (SPEC §2.3): only backslash and double quote are escaped."""
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _int_in(v: Any, bits: int, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(f"{what}: expected an integer, got {v!r}")
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if not lo <= v <= hi:
        raise ValueError(f"{what}: {v} out of range for i{bits}")
    return v


def i8(v, what="tinyint"):
    return struct.pack("<b", _int_in(v, 8, what))


def i16(v, what="smallint"):
    return struct.pack("<h", _int_in(v, 16, what))


def i32(v, what="int"):
    return struct.pack("<i", _int_in(v, 32, what))


def i64(v, what="bigint"):
    return struct.pack("<q", _int_in(v, 64, what))


def u32(n: int) -> bytes:
    if not 0 <= n < (1 << 32):
        raise ValueError(f"u32 out of range: {n}")
    return struct.pack("<I", n)


def lenbytes(b: bytes) -> bytes:
    return u32(len(b)) + b


# --------------------------------------------------------------------------------------------------------------
# Floating point (SPEC §3.2)
# --------------------------------------------------------------------------------------------------------------

_SPECIAL_FLOATS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf, "-0.0": -0.0}


def _float_value(v: Any, what: str) -> float:
    if isinstance(v, str):
        if v not in _SPECIAL_FLOATS:
            raise ValueError(f"{what}: unexpected string {v!r} for a floating-point value")
        return _SPECIAL_FLOATS[v]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"{what}: expected a number, got {v!r}")
    return float(v)


def float_bits(x: float) -> bytes:
    """Normalised IEEE binary32 bits, u32 LE.  The (binary64) value is rounded to binary32."""
    if math.isnan(x):
        return struct.pack("<I", 0x7FC00000)
    if x == 0.0:
        x = 0.0  # -0.0 -> 0.0
    try:
        return struct.pack("<f", x)
    except OverflowError:
        raise ValueError(f"float: {x!r} is out of the binary32 range") from None


def double_bits(x: float) -> bytes:
    """Normalised IEEE binary64 bits, u64 LE."""
    if math.isnan(x):
        return struct.pack("<Q", 0x7FF8000000000000)
    if x == 0.0:
        x = 0.0
    return struct.pack("<d", x)


# --------------------------------------------------------------------------------------------------------------
# Type tree and canonical schema parser (SPEC §2)
# --------------------------------------------------------------------------------------------------------------

SIMPLE_TYPES = {
    "boolean", "tinyint", "smallint", "int", "bigint", "float", "double", "string", "binary", "date",
    "timestamp", "timestamp_ntz", "void", "variant", "interval",
}
# Collation names as Spark prints them (SPEC §2.3): the UTF8 family, or an ICU locale (UNICODE, or language, optional
# script, optional ISO 3166 alpha-3 country) with the non-default specifiers in the order CI, AI, RTRIM.
COLLATION_NAME = re.compile(
    r"UTF8_LCASE(_RTRIM)?|UTF8_BINARY_RTRIM"
    r"|(UNICODE|[a-z]{2,3}(_[A-Z][a-z]{3})?(_[A-Z]{3})?)(_CI)?(_AI)?(_RTRIM)?"
)
YM_UNITS = ["year", "month"]
DT_UNITS = ["day", "hour", "minute", "second"]


@dataclass
class DType:
    kind: str  # see SIMPLE_TYPES plus: decimal, collated, time, timestamp_nanos, interval_ym, interval_dt,
    #            array, map, struct
    precision: int = 0
    scale: int = 0
    text: str = ""  # collation name; interval qualifier; nanos timestamp base name
    element: Optional["DType"] = None
    key: Optional["DType"] = None
    value: Optional["DType"] = None
    fields: List[Tuple[str, "DType"]] = field(default_factory=list)

    def render(self) -> str:
        k = self.kind
        if k in SIMPLE_TYPES:
            return k
        if k == "decimal":
            return f"decimal({self.precision},{self.scale})"
        if k == "collated":
            return f"string collate {self.text}"
        if k == "time":
            return f"time({self.precision})"
        if k == "timestamp_nanos":
            return f"{self.text}({self.precision})"
        if k in ("interval_ym", "interval_dt"):
            return f"interval {self.text}"
        if k == "array":
            return f"array<{self.element.render()}>"
        if k == "map":
            return f"map<{self.key.render()},{self.value.render()}>"
        if k == "struct":
            return "struct<" + ",".join(quote_name(n) + ":" + t.render() for n, t in self.fields) + ">"
        raise AssertionError(k)


class SchemaError(ValueError):
    pass


class _Parser:
    def __init__(self, s: str):
        self.s = s
        self.i = 0

    def fail(self, msg: str):
        raise SchemaError(f"{msg} at offset {self.i} in {self.s!r}")

    def peek(self, lit: str) -> bool:
        return self.s.startswith(lit, self.i)

    def expect(self, lit: str):
        if not self.peek(lit):
            self.fail(f"expected {lit!r}")
        self.i += len(lit)

    def word(self) -> str:
        m = re.compile(r"[a-z_0-9]+").match(self.s, self.i)
        if not m:
            self.fail("expected a type name")
        self.i = m.end()
        return m.group(0)

    def number(self) -> int:
        m = re.compile(r"0|[1-9][0-9]*").match(self.s, self.i)
        if not m:
            self.fail("expected a non-negative integer")
        self.i = m.end()
        return int(m.group(0))

    def quoted(self) -> str:
        self.expect('"')
        out = []
        while True:
            if self.i >= len(self.s):
                self.fail("unterminated quoted name")
            c = self.s[self.i]
            if c == '"':
                self.i += 1
                return "".join(out)
            if c == "\\":
                if self.i + 1 >= len(self.s) or self.s[self.i + 1] not in '\\"':
                    self.fail("invalid escape in quoted name (only \\\\ and \\\" are allowed)")
                out.append(self.s[self.i + 1])
                self.i += 2
                continue
            out.append(c)
            self.i += 1

    def type(self, path: str = "") -> DType:
        """The type at the cursor; ``path`` names it in errors (``s.x``, ``s.x[]``, ``m.key``, ``m.value``)."""
        w = self.word()
        if w == "struct":
            self.expect("<")
            fields: List[Tuple[str, DType]] = []
            if not self.peek(">"):
                while True:
                    n = self.quoted()
                    child = f"{path}.{n}" if path else n
                    check_name(n, child)
                    self.expect(":")
                    fields.append((n, self.type(child)))
                    if self.peek(","):
                        self.i += 1
                        continue
                    break
            self.expect(">")
            names = [n for n, _ in fields]
            if len(set(names)) != len(names):
                dup = sorted({n for n in names if names.count(n) > 1})
                raise SchemaError(f"duplicate field name(s) {dup} in {self.s!r}")
            fields.sort(key=lambda f: name_key(f[0]))
            return DType("struct", fields=fields)
        if w == "array":
            self.expect("<")
            e = self.type(path + "[]")
            self.expect(">")
            return DType("array", element=e)
        if w == "map":
            self.expect("<")
            k = self.type(path + ".key")
            self.expect(",")
            v = self.type(path + ".value")
            self.expect(">")
            return DType("map", key=k, value=v)
        if w == "decimal":
            self.expect("(")
            p = self.number()
            self.expect(",")
            s = self.number()
            self.expect(")")
            if not (1 <= p <= 38 and 0 <= s <= p):
                self.fail(f"invalid decimal({p},{s})")
            return DType("decimal", precision=p, scale=s)
        if w == "string":
            if self.peek(" collate "):
                self.i += len(" collate ")
                m = re.compile(r"[A-Za-z0-9_]+").match(self.s, self.i)
                if not m:
                    self.fail("expected a collation name")
                name = m.group(0)
                if name == "UTF8_BINARY":
                    self.fail("UTF8_BINARY is written as plain 'string' in a canonical schema")
                if not COLLATION_NAME.fullmatch(name):
                    self.fail(f"{name!r} is not a collation name as SPEC §2.3 spells it")
                self.i = m.end()
                return DType("collated", text=name)
            return DType("string")
        if w == "time":
            self.expect("(")
            p = self.number()
            self.expect(")")
            if not 0 <= p <= 6:
                self.fail(f"invalid time({p})")
            return DType("time", precision=p)
        if w in ("timestamp_ntz", "timestamp_ltz") and self.peek("("):
            self.expect("(")
            p = self.number()
            self.expect(")")
            if not 0 <= p <= 9:
                self.fail(f"invalid {w}({p})")
            return DType("timestamp_nanos", precision=p, text=w)
        if w == "interval":
            if not self.peek(" "):
                return DType("interval")  # calendar interval
            self.i += 1
            start = self.word()
            end = None
            if self.peek(" to "):
                self.i += len(" to ")
                end = self.word()
            if start in YM_UNITS:
                if end is not None and not (end in YM_UNITS and YM_UNITS.index(end) > YM_UNITS.index(start)):
                    self.fail(f"invalid year-month interval qualifier {start} to {end}")
                return DType("interval_ym", text=start if end is None else f"{start} to {end}")
            if start in DT_UNITS:
                if end is not None and not (end in DT_UNITS and DT_UNITS.index(end) > DT_UNITS.index(start)):
                    self.fail(f"invalid day-time interval qualifier {start} to {end}")
                return DType("interval_dt", text=start if end is None else f"{start} to {end}")
            self.fail(f"unknown interval field {start!r}")
        if w in SIMPLE_TYPES:
            return DType(w)
        self.fail(f"unknown or unsupported type {w!r}")


def parse_schema(schema_str: str) -> DType:
    """Parse a canonical schema string into a type tree (struct fields sorted into canonical order)."""
    p = _Parser(schema_str)
    t = p.type()
    if p.i != len(schema_str):
        p.fail("trailing characters")
    if t.kind != "struct":
        raise SchemaError(f"a schema must be a struct of columns: {schema_str!r}")
    if not t.fields:
        raise SchemaError("at least one column is required")
    return t


def canonical_schema(schema_str: str) -> str:
    return parse_schema(schema_str).render()


def schema_digest(schema_str: str) -> bytes:
    """SHA-256 of the UTF-8 bytes of the canonical schema (SPEC §2.3)."""
    return hashlib.sha256(canonical_schema(schema_str).encode("utf-8")).digest()


# --------------------------------------------------------------------------------------------------------------
# Value encoding (SPEC §3)
# --------------------------------------------------------------------------------------------------------------


PLAIN_DECIMAL = re.compile(r"-?[0-9]+(\.[0-9]+)?")


def decimal_unscaled(v: Any, precision: int, scale: int) -> int:
    """The exact unscaled value of a DECIMAL given as a string in plain notation (SPEC §10); error if not exact."""
    if not isinstance(v, str) or not PLAIN_DECIMAL.fullmatch(v):
        raise ValueError(f"decimal({precision},{scale}): expected a string in plain notation "
                         f"(-?digits[.digits]), got {v!r}")
    d = decimal.Decimal(v)
    sign, digits, exp = d.as_tuple()
    mantissa = int("".join(map(str, digits))) if digits else 0
    # value = mantissa * 10^exp; unscaled = value * 10^scale = mantissa * 10^(exp + scale)
    e = exp + scale
    if e >= 0:
        unscaled = mantissa * 10 ** e
    else:
        q, r = divmod(mantissa, 10 ** (-e))
        if r:
            raise ValueError(f"decimal({precision},{scale}): {v!r} is not exact at scale {scale}")
        unscaled = q
    if sign:
        unscaled = -unscaled
    if abs(unscaled) >= 10 ** precision:
        raise ValueError(f"decimal({precision},{scale}): {v!r} exceeds the precision")
    return unscaled


def _utf8(s: Any, what: str) -> bytes:
    if not isinstance(s, str):
        raise ValueError(f"{what}: expected a string, got {s!r}")
    return s.encode("utf-8")  # strict: a lone surrogate cannot be represented and is an error


def encode_value(t: DType, v: Any) -> bytes:
    """The layout of a present (non-null) value of type t (table of SPEC §2.3)."""
    k = t.kind
    if k == "boolean":
        if not isinstance(v, bool):
            raise ValueError(f"boolean: expected true/false, got {v!r}")
        return b"\x01" if v else b"\x00"
    if k == "tinyint":
        return i8(v)
    if k == "smallint":
        return i16(v)
    if k == "int":
        return i32(v)
    if k == "bigint":
        return i64(v)
    if k == "float":
        return float_bits(_float_value(v, "float"))
    if k == "double":
        return double_bits(_float_value(v, "double"))
    if k == "decimal":
        u = decimal_unscaled(v, t.precision, t.scale)
        if t.precision <= 18:
            return struct.pack("<q", u)
        return (u % MOD128).to_bytes(16, "little")  # i128, two's complement, low 8 bytes first
    if k in ("string", "collated"):
        return lenbytes(_utf8(v, t.render()))
    if k == "binary":
        if not isinstance(v, str):
            raise ValueError(f"binary: expected a hex string, got {v!r}")
        return lenbytes(bytes.fromhex(v))
    if k == "date":
        return i32(v, "date")
    if k in ("timestamp", "timestamp_ntz"):
        return i64(v, k)
    if k == "time":
        n = _int_in(v, 64, "time")
        if not 0 <= n < 86_400_000_000_000:
            raise ValueError(f"time: {n} ns is not within a day")
        return struct.pack("<q", n)
    if k == "timestamp_nanos":
        if not (isinstance(v, list) and len(v) == 2):
            raise ValueError(f"{t.render()}: expected [micros, nanos], got {v!r}")
        micros, nanos = v
        nanos = _int_in(nanos, 16, "nanoseconds within the microsecond")
        if not 0 <= nanos <= 999:
            raise ValueError(f"{t.render()}: nanoseconds within the microsecond must be 0..999, got {nanos}")
        return i64(micros, t.render()) + struct.pack("<h", nanos)
    if k == "interval":
        if not (isinstance(v, list) and len(v) == 3):
            raise ValueError(f"interval: expected [months, days, micros], got {v!r}")
        return i32(v[0], "interval months") + i32(v[1], "interval days") + i64(v[2], "interval micros")
    if k == "interval_ym":
        return i32(v, t.render())
    if k == "interval_dt":
        return i64(v, t.render())
    if k == "void":
        raise ValueError(f"void: a value of type void must be null, got {v!r}")
    if k == "variant":
        return encode_variant_column(v)
    if k == "array":
        if not isinstance(v, list):
            raise ValueError(f"{t.render()}: expected a list, got {v!r}")
        return u32(len(v)) + b"".join(slot(t.element, e) for e in v)
    if k == "map":
        if not isinstance(v, list):
            raise ValueError(f"{t.render()}: expected a list of [key, value] pairs, got {v!r}")
        total = 0
        for entry in v:
            if not (isinstance(entry, list) and len(entry) == 2):
                raise ValueError(f"{t.render()}: expected a [key, value] pair, got {entry!r}")
            key, val = entry
            if key is None:
                raise ValueError(f"{t.render()}: a map key cannot be null")
            total += u128_of(murmur3_x64_128(slot(t.key, key) + slot(t.value, val)))
        return u32(len(v)) + u128_bytes(total)
    if k == "struct":
        return encode_struct(t, v)
    raise AssertionError(k)


def encode_struct(t: DType, v: Any) -> bytes:
    """The slots of the fields in canonical order (SPEC §3.5); v is an object from field name to value."""
    if not isinstance(v, dict):
        raise ValueError(f"{t.render()}: expected an object, got {v!r}")
    names = {n for n, _ in t.fields}
    extra = set(v) - names
    missing = names - set(v)
    if extra or missing:
        raise ValueError(f"{t.render()}: object fields do not match the type "
                         f"(missing {sorted(missing)}, unexpected {sorted(extra)})")
    return b"".join(slot(ft, v[n]) for n, ft in t.fields)


def slot(t: DType, v: Any) -> bytes:
    """Presence marker then layout (SPEC §3.1)."""
    if v is None:
        return b"\x00"
    return b"\x01" + encode_value(t, v)


# --------------------------------------------------------------------------------------------------------------
# Variant (SPEC §3.6)
# --------------------------------------------------------------------------------------------------------------


class _JInt(str):
    """Text of a JSON number without '.' or exponent."""


class _JNum(str):
    """Text of a JSON number with '.' and/or an exponent."""


class _JObj(list):
    """A JSON object, as its list of (key, value) pairs in textual order."""


def _variant_pairs(pairs):
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError(f"variant: duplicate object key(s) {sorted({k for k in keys if keys.count(k) > 1})}")
    return _JObj(pairs)


def _reject_constant(c):
    raise ValueError(f"variant: {c} is not valid JSON")


def parse_variant_text(text: str) -> Any:
    return json.loads(text, parse_int=_JInt, parse_float=_JNum, parse_constant=_reject_constant,
                      object_pairs_hook=_variant_pairs)


def variant_decimal_text(d: decimal.Decimal) -> str:
    """Plain notation, trailing fractional zeros removed, zero as '0' (SPEC §3.6 tag 5)."""
    sign, digits, exp = d.as_tuple()
    s = "".join(map(str, digits)).lstrip("0")
    if not s:
        return "0"
    if exp >= 0:
        body = s + "0" * exp
    else:
        frac_len = -exp
        if len(s) <= frac_len:
            s = "0" * (frac_len - len(s) + 1) + s
        ip, fp = s[:-frac_len], s[-frac_len:]
        fp = fp.rstrip("0")
        body = ip + ("." + fp if fp else "")
    return ("-" if sign else "") + body


def _variant_decimal_or_double(text: str) -> bytes:
    """Spark's parse_json: a number is a decimal if written without exponent and it fits decimal(38); else double."""
    if not re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", text):
        return b"\x04" + double_bits(float(text))
    d = decimal.Decimal(text)
    _, digits, exp = d.as_tuple()
    precision = len(digits)
    scale = -exp if exp < 0 else 0
    if precision <= 38 and scale <= 38:
        return b"\x05" + lenbytes(variant_decimal_text(d).encode("ascii"))
    return b"\x04" + double_bits(float(text))


def encode_variant(v: Any) -> bytes:
    """Tag byte and layout of a variant logical value (parsed with parse_variant_text)."""
    if v is None:
        return b"\x00"
    if v is True:
        return b"\x01\x01"
    if v is False:
        return b"\x01\x00"
    if isinstance(v, _JInt):
        n = int(v)
        if -(1 << 63) <= n < (1 << 63):
            return b"\x02" + struct.pack("<q", n)
        return _variant_decimal_or_double(v)
    if isinstance(v, _JNum):
        return _variant_decimal_or_double(v)
    if isinstance(v, _JObj):
        total = 0
        for key, val in v:
            total += u128_of(murmur3_x64_128(lenbytes(key.encode("utf-8")) + encode_variant(val)))
        return b"\x0d" + u32(len(v)) + u128_bytes(total)
    if isinstance(v, str):
        return b"\x09" + lenbytes(v.encode("utf-8"))
    if isinstance(v, list):
        return b"\x0c" + u32(len(v)) + b"".join(encode_variant(e) for e in v)
    raise ValueError(f"variant: cannot encode {v!r}")


def encode_variant_column(v: Any) -> bytes:
    if not (isinstance(v, dict) and set(v) == {"variant"} and isinstance(v["variant"], str)):
        raise ValueError(f'variant: expected {{"variant": JSON text}}, got {v!r}')
    return encode_variant(parse_variant_text(v["variant"]))


# --------------------------------------------------------------------------------------------------------------
# Row digest, combination, finalisation (SPEC §4-§6)
# --------------------------------------------------------------------------------------------------------------


def row_bytes(schema: DType, row: dict) -> bytes:
    """The bytes hashed after the schema digest: the column slots in canonical order."""
    return encode_struct(schema, row)


def row_digest(schema_str: str, row: dict) -> bytes:
    t = parse_schema(schema_str)
    sd = hashlib.sha256(t.render().encode("utf-8")).digest()
    return murmur3_x64_128(sd + row_bytes(t, row))


def finalise(sd: bytes, rows: int, total: int) -> bytes:
    """The 32-byte final digest (SPEC §6)."""
    return hashlib.sha256(ALGORITHM.encode("ascii") + sd + struct.pack("<Q", rows) + u128_bytes(total)).digest()


def multihash(final: bytes) -> bytes:
    return varint(MULTIHASH_CODE) + varint(len(final)) + final


def digest_string(final: bytes) -> str:
    return "f" + multihash(final).hex()


def table_digest(schema_str: str, rows: list) -> dict:
    t = parse_schema(schema_str)
    canon = t.render()
    sd = hashlib.sha256(canon.encode("utf-8")).digest()
    total = 0
    digests = []
    for r in rows:
        d = murmur3_x64_128(sd + row_bytes(t, r))
        digests.append(d)
        total = (total + u128_of(d)) % MOD128
    final = finalise(sd, len(rows), total)
    return {
        "digest": digest_string(final),
        "rows": len(rows),
        "schema_digest": sd.hex(),
        "content_sum": format(total, "032x"),
        "schema": canon,
        "multihash": multihash(final),
        "row_digests": [d.hex() for d in digests],
    }


# --------------------------------------------------------------------------------------------------------------
# Digest states (SPEC §11)
# --------------------------------------------------------------------------------------------------------------

STATE_MAGIC = b"DSHS"
STATE_FORMAT_VERSION = 1


class StateError(ValueError):
    """A byte string that is not a well-formed dsha-v1 state, or two states that do not merge."""


def serialise_state(schema_str: str, rows: int, total: int) -> bytes:
    """The state of a table (SPEC §11.1) from its canonical schema, row count and sum."""
    canon = canonical_schema(schema_str).encode("utf-8")
    sd = hashlib.sha256(canon).digest()
    return (STATE_MAGIC + bytes([STATE_FORMAT_VERSION]) + varint(MULTIHASH_CODE)
            + struct.pack("<I", len(sd)) + sd
            + struct.pack("<Q", rows % (1 << 64))
            + struct.pack("<I", 16) + u128_bytes(total)
            + struct.pack("<I", len(canon)) + canon)


def parse_state(data: bytes) -> dict:
    """The fields of a state (SPEC §11.2): schema, schema_digest (bytes), rows, sum; StateError if malformed."""
    pos = 0

    def take(n: int, what: str) -> bytes:
        nonlocal pos
        if pos + n > len(data):
            raise StateError(f"truncated: {what} needs {n} bytes at offset {pos} of {len(data)}")
        out = data[pos:pos + n]
        pos += n
        return out

    def u32_field(what: str) -> int:
        return struct.unpack("<I", take(4, what))[0]

    if take(4, "the magic") != STATE_MAGIC:
        raise StateError("bad magic")
    version = take(1, "the format version")[0]
    if version != STATE_FORMAT_VERSION:
        raise StateError(f"unsupported format version {version}")
    code, shift, varint_bytes = 0, 0, b""
    while True:
        b = take(1, "the algorithm code")[0]
        varint_bytes += bytes([b])
        code |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            break
    if varint_bytes != varint(code):
        raise StateError("the algorithm code is not a minimal varint")
    if code != MULTIHASH_CODE:
        raise StateError(f"unknown algorithm code {code:#x}")
    if u32_field("the schema digest length") != 32:
        raise StateError("a dsha-v1 schema digest has 32 bytes")
    sd = take(32, "the schema digest")
    rows = struct.unpack("<Q", take(8, "the row count"))[0]
    if u32_field("the combiner state length") != 16:
        raise StateError("a dsha-v1 combiner state has 16 bytes")
    total = int.from_bytes(take(16, "the sum"), "little")
    canon = take(u32_field("the schema length"), "the schema")
    if pos != len(data):
        raise StateError(f"{len(data) - pos} bytes after the schema")
    if hashlib.sha256(canon).digest() != sd:
        raise StateError("the schema text does not match its digest")
    try:
        schema = canon.decode("utf-8")
    except UnicodeDecodeError as e:
        raise StateError(f"the schema is not valid UTF-8: {e}") from None
    return {"schema": schema, "schema_digest": sd, "rows": rows, "sum": total}


def merge_states(a: bytes, b: bytes) -> bytes:
    """The merge of two states (SPEC §11.3)."""
    x, y = parse_state(a), parse_state(b)
    if x["schema_digest"] != y["schema_digest"]:
        raise StateError(f"cannot merge states of different schemas: {x['schema']} and {y['schema']}")
    return serialise_state(x["schema"], x["rows"] + y["rows"], x["sum"] + y["sum"])


def finalise_state(data: bytes) -> str:
    """The digest string of a state (SPEC §11.3, §6)."""
    st = parse_state(data)
    return digest_string(finalise(st["schema_digest"], st["rows"], st["sum"]))


# --------------------------------------------------------------------------------------------------------------
# File manifests (SPEC §12)
# --------------------------------------------------------------------------------------------------------------

MANIFEST_VERSION = 1
_HEX = re.compile(r"[0-9a-f]*")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
# SPEC §12.1: member -> JSON type (int means a JSON integer: not a boolean, not a number with a fraction or exponent)
MANIFEST_MEMBERS = {
    "dsha": str, "version": int, "algorithm": str, "format": str, "root": str, "schema": str,
    "schema_digest": str, "rows": int, "digest": str, "files": list, "checksum": str,
}
FILE_MEMBERS = {"path": str, "size": int, "modified": int, "rows": int, "sum": str}


class ManifestError(ValueError):
    """A manifest a reader must ignore (SPEC §12.3); the message names the rule."""


def _is_type(v: Any, t: type) -> bool:
    if t is int:
        return isinstance(v, int) and not isinstance(v, bool)
    return isinstance(v, t)


def _field_text(v: Any, what: str) -> bytes:
    """One checksum field (SPEC §12.2): u32 LE byte length, then the UTF-8 of its text (integers in decimal)."""
    if _is_type(v, int):
        text = str(v)  # decimal, '-' for a negative number
    elif isinstance(v, str):
        text = v
    else:
        raise ManifestError(f"checksum: {what} must be a string or an integer, got {v!r}")
    return lenbytes(text.encode("utf-8"))


def manifest_checksum(doc: dict) -> str:
    """The checksum of a manifest (SPEC §12.2), lower-case hex.  Covers everything but ``rows``, ``digest`` (of
    the whole: derived from the files) and members the specification does not name."""
    files = doc["files"]
    if not isinstance(files, list):
        raise ManifestError("checksum: files must be an array")
    out = bytearray()
    out += _field_text("manifest", "dsha")
    for m in ("version", "algorithm", "format", "root", "schema", "schema_digest"):
        out += _field_text(doc[m], m)
    out += _field_text(len(files), "the number of files")
    for i, f in enumerate(files):
        if not isinstance(f, dict):
            raise ManifestError(f"checksum: files[{i}] must be an object")
        for m in ("path", "size", "modified", "rows", "sum"):
            out += _field_text(f[m], f"files[{i}].{m}")
    return hashlib.sha256(bytes(out)).hexdigest()


def load_manifest(data: Any) -> dict:
    """Parse a manifest's bytes (or text) strictly: UTF-8, JSON, an object (SPEC §12.1); duplicate member names
    and the non-JSON constants NaN/Infinity are rejected (JSON does not define them)."""
    if isinstance(data, (bytes, bytearray)):
        try:
            data = bytes(data).decode("utf-8")
        except UnicodeDecodeError as e:
            raise ManifestError(f"not valid JSON: not UTF-8 ({e})") from None

    def pairs(ps):
        keys = [k for k, _ in ps]
        if len(set(keys)) != len(keys):
            raise ManifestError(f"not valid JSON: duplicate member name(s) "
                                f"{sorted({k for k in keys if keys.count(k) > 1})}")
        return dict(ps)

    def constant(c):
        raise ManifestError(f"not valid JSON: {c}")

    try:
        doc = json.loads(data, object_pairs_hook=pairs, parse_constant=constant)
    except json.JSONDecodeError as e:
        raise ManifestError(f"not valid JSON: {e}") from None
    if not isinstance(doc, dict):
        raise ManifestError("not valid JSON: a manifest is a JSON object")
    return doc


def _check_members(obj: dict, members: dict, where: str):
    for m, t in members.items():
        if m not in obj:
            raise ManifestError(f"lacks a member: {where}{m}")
        if not _is_type(obj[m], t):
            raise ManifestError(f"a member of the wrong type: {where}{m} must be "
                                f"{'an integer' if t is int else 'a JSON ' + t.__name__}, got {obj[m]!r}")


def _check_relative_path(p: str, where: str):
    # SPEC §12.1: the file's path below root, '/'-separated.  Anything that is not a path below root is rejected.
    if p == "" or p.startswith("/") or any(seg in ("", ".", "..") for seg in p.split("/")):
        raise ManifestError(f"{where}path {p!r} is not a '/'-separated path below root")


def check_manifest(doc: dict, expect_algorithm: Optional[str] = None, expect_format: Optional[str] = None,
                   expect_schema: Optional[str] = None, expect_root: Optional[str] = None) -> dict:
    """Check one manifest against every rule of SPEC §12.1-§12.3 that concerns it alone, raising ManifestError
    naming the rule; return the merge (SPEC §11.3) of the listed files' states:

        {"rows", "sum" (int), "content_sum" (hex, most significant first), "digest" (SPEC §6), "state" (bytes,
         SPEC §11.1), "schema", "schema_digest" (hex), "files": {path: (size, modified, rows, sum)}}

    The manifest's own ``rows`` and ``digest`` are not covered by the checksum (a reader recomputes them, §12.2):
    they are returned as ``manifest_rows`` / ``manifest_digest`` for the caller to compare.  The ``expect_*``
    arguments are the digest being computed (algorithm, format, schema) and, for a state file, the directory being
    read (§12.3: a manifest that differs from them is ignored)."""
    if not isinstance(doc, dict):
        raise ManifestError("not valid JSON: a manifest is a JSON object")
    _check_members(doc, MANIFEST_MEMBERS, "")
    if doc["dsha"] != "manifest":
        raise ManifestError(f"another dsha: {doc['dsha']!r}, expected 'manifest'")
    if doc["version"] != MANIFEST_VERSION:
        raise ManifestError(f"another version: {doc['version']}, expected {MANIFEST_VERSION}")
    if doc["algorithm"] != ALGORITHM:
        raise ManifestError(f"an algorithm this reader does not implement: {doc['algorithm']!r}")
    fmt = doc["format"]
    if not fmt or fmt != fmt.lower():
        raise ManifestError(f"format must be a data source name in lower case, got {fmt!r}")
    if not _SCHEME.match(doc["root"]):
        raise ManifestError(f"root must be a fully qualified Hadoop path (scheme:path), got {doc['root']!r}")
    schema = doc["schema"]
    try:
        canon = canonical_schema(schema)
    except SchemaError as e:
        raise ManifestError(f"schema is not a canonical schema (SPEC §2): {e}") from None
    if canon != schema:
        raise ManifestError(f"schema is not in canonical form: {schema!r}, canonical {canon!r}")
    sd = hashlib.sha256(schema.encode("utf-8")).digest()
    if doc["schema_digest"] != sd.hex():
        raise ManifestError(f"schema_digest is not the SHA-256 of schema: {doc['schema_digest']!r}, "
                            f"expected {sd.hex()!r}")
    seen = {}
    for i, f in enumerate(doc["files"]):
        where = f"files[{i}]."
        if not isinstance(f, dict):
            raise ManifestError(f"a member of the wrong type: files[{i}] must be a JSON object, got {f!r}")
        _check_members(f, FILE_MEMBERS, where)
        p = f["path"]
        _check_relative_path(p, where)
        if p in seen:
            raise ManifestError(f"a path listed twice: {p!r} (files[{seen[p]}] and files[{i}])")
        seen[p] = i  # in any order (SPEC §12.3: writers write ascending order, readers do not require it)
        if f["size"] < 0:
            raise ManifestError(f"{where}size must not be negative, got {f['size']}")
        if not 0 <= f["rows"] < (1 << 64):
            raise ManifestError(f"{where}rows must be a u64 (SPEC §11.1), got {f['rows']}")
        s = f["sum"]
        if len(s) != 32:
            raise ManifestError(f"a sum of the wrong length: {where}sum has {len(s)} hex digits, expected 32 "
                                f"(16 bytes, SPEC §11.1)")
        if not _HEX.fullmatch(s):
            raise ManifestError(f"{where}sum is not lower-case hex: {s!r}")
    computed = manifest_checksum(doc)
    if doc["checksum"] != computed:
        raise ManifestError(f"a checksum that does not match: {doc['checksum']!r}, computed {computed!r}")
    if expect_algorithm is not None and doc["algorithm"] != expect_algorithm:
        raise ManifestError(f"algorithm {doc['algorithm']!r} differs from the digest being computed "
                            f"({expect_algorithm!r})")
    if expect_format is not None and fmt != expect_format:
        raise ManifestError(f"format {fmt!r} differs from the digest being computed ({expect_format!r})")
    if expect_schema is not None and schema_digest(expect_schema) != sd:
        raise ManifestError(f"schema digest differs from the digest being computed: {schema!r} is not "
                            f"{canonical_schema(expect_schema)!r}")
    if expect_root is not None and doc["root"] != expect_root:
        raise ManifestError(f"root {doc['root']!r} is not the directory being read ({expect_root!r})")
    rows = total = 0
    for f in doc["files"]:
        rows = (rows + f["rows"]) % (1 << 64)
        total = (total + int.from_bytes(bytes.fromhex(f["sum"]), "little")) % MOD128
    return {
        "rows": rows,
        "sum": total,
        "content_sum": format(total, "032x"),
        "digest": digest_string(finalise(sd, rows, total)),
        "state": serialise_state(schema, rows, total),
        "schema": schema,
        "schema_digest": sd.hex(),
        "files": {f["path"]: (f["size"], f["modified"], f["rows"], f["sum"]) for f in doc["files"]},
        "manifest_rows": doc["rows"],
        "manifest_digest": doc["digest"],
    }


def file_state(doc: dict, path: str) -> bytes:
    """The state (SPEC §11.1) of one entry of a checked manifest: its algorithm, schema digest, rows and sum."""
    entry = check_manifest(doc)["files"][path]
    return serialise_state(doc["schema"], entry[2], int.from_bytes(bytes.fromhex(entry[3]), "little"))


# --------------------------------------------------------------------------------------------------------------
# Metadata fingerprints (SPEC §13)
# --------------------------------------------------------------------------------------------------------------

META_ALGORITHM = "dsha-meta-v1"
META_MULTIHASH_CODE = 0x3D5A80


def _u64(n: int, what: str) -> bytes:
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n < (1 << 64):
        raise ValueError(f"{what}: expected a u64, got {n!r}")
    return struct.pack("<Q", n)


def meta_digest_string(meta: bytes) -> str:
    """multibase base16 of the multihash varint(0x3d5a80) || varint(32) || meta: always 'f80b5f50120...'."""
    return "f" + (varint(META_MULTIHASH_CODE) + varint(len(meta)) + meta).hex()


def meta_digest_files(schema_str: str, files) -> str:
    """dsha-meta-v1 of the files a table reads (SPEC §13).  files: [(qualified_path, size, modified_ms, etag)],
    in any order (sorted here by the UTF-8 bytes of the path); etag is '' where the file system reports none."""
    sd = schema_digest(schema_str)
    entries = []
    for f in files:
        if not (isinstance(f, (tuple, list)) and len(f) == 4):
            raise ValueError(f"a file is (path, size, modified, etag), got {f!r}")
        path, size, modified, etag = f
        if not isinstance(path, str) or not path:
            raise ValueError(f"a file path must be a non-empty string, got {path!r}")
        if not isinstance(etag, str):
            raise ValueError(f"an ETag must be a string ('' for none), got {etag!r}")
        pb = path.encode("utf-8")
        entries.append((pb, lenbytes(pb) + _u64(size, f"{path}: size") + _u64(modified, f"{path}: modified")
                        + lenbytes(etag.encode("utf-8"))))
    entries.sort(key=lambda e: e[0])
    for a, b in zip(entries, entries[1:]):
        if a[0] == b[0]:
            raise ValueError(f"a file listed twice: {a[0].decode('utf-8')!r}")
    meta = hashlib.sha256(META_ALGORITHM.encode("ascii") + sd + _u64(len(entries), "number of files")
                          + b"".join(e[1] for e in entries)).digest()
    return meta_digest_string(meta)


def meta_digest_delta(schema_str: str, table_id: str, data_version: int) -> str:
    """dsha-meta-v1 of a Delta table version (SPEC §13.1) from its metaData.id and data version."""
    if not isinstance(table_id, str):
        raise ValueError(f"a Delta table id is a string, got {table_id!r}")
    prefix = b"dsha-meta-v1:delta"
    assert len(prefix) == 18
    meta = hashlib.sha256(prefix + schema_digest(schema_str) + lenbytes(table_id.encode("utf-8"))
                          + _u64(data_version, "data version")).digest()
    return meta_digest_string(meta)


def delta_commit_is_layout_only(actions: list) -> bool:
    """SPEC §13.1: every add and remove action has dataChange false, and there is no metaData action.  An add or
    remove without a boolean dataChange (the Delta protocol requires one) is taken as a data change."""
    for a in actions:
        if not isinstance(a, dict):
            raise ValueError(f"a Delta action is a JSON object, got {a!r}")
        if "metaData" in a:
            return False
        for kind in ("add", "remove"):
            if kind in a and not (isinstance(a[kind], dict) and a[kind].get("dataChange") is False):
                return False
    return True


def delta_data_version(commits, v: int) -> int:
    """SPEC §13.1: the greatest d <= v such that commit d is not layout-only, or is missing or unreadable, or
    d = 0.  commits: a mapping from version to its list of actions, or to None when the commit file is unreadable
    (a version absent from the mapping is missing)."""
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ValueError(f"a Delta version is a non-negative integer, got {v!r}")
    for d in range(v, 0, -1):
        actions = commits.get(d)
        if actions is None or not delta_commit_is_layout_only(actions):
            return d
    return 0


def read_delta_commits(table_dir: str, v: int) -> dict:
    """The actions of commits 0..v of a local Delta table (``_delta_log/%020d.json``, one JSON action a line);
    None for a commit file that is missing or unreadable."""
    import os
    out = {}
    for d in range(v + 1):
        path = os.path.join(table_dir, "_delta_log", f"{d:020d}.json")
        try:
            with open(path, encoding="utf-8") as fh:
                out[d] = [json.loads(line) for line in fh if line.strip()]
        except (OSError, ValueError):
            out[d] = None
    return out


def list_local_data_files(directory: str) -> list:
    """The data files of a local directory as SPEC §12.3 lists them (hidden names skipped at every level: as Spark
    does, a name starting with '.', or with '_' unless it contains '='; directories are descended), as
    (qualified_path, size, modified_ms, etag) with the fully qualified Hadoop path of a local file ('file:' + the
    absolute path, as the file system names it) and no ETag."""
    import os

    def hidden(name):
        return name.startswith(".") or (name.startswith("_") and "=" not in name)

    out = []
    top = os.path.abspath(directory)
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if not hidden(d))
        for name in filenames:
            if hidden(name):
                continue
            full = os.path.join(dirpath, name)
            st = os.stat(full)
            out.append(("file:" + full.replace(os.sep, "/"), st.st_size, st.st_mtime_ns // 10 ** 6, ""))
    return out


# --------------------------------------------------------------------------------------------------------------
# Golden vectors (SPEC §10)
# --------------------------------------------------------------------------------------------------------------

EXPECTED_FIELDS = ("row_digests", "dsha", "content_sum", "schema_digest", "state")


def _compute_expected(vec: dict) -> dict:
    res = table_digest(vec["schema"], vec["rows"])
    return {
        "row_digests": res["row_digests"],
        "dsha": res["digest"],
        "content_sum": res["content_sum"],
        "schema_digest": res["schema_digest"],
        "state": serialise_state(res["schema"], res["rows"], int(res["content_sum"], 16)).hex(),
    }


def check_vector(vec: dict) -> List[str]:
    """Problems found with one vector (empty if it passes)."""
    problems = []
    args = vec.get("arguments", "*")
    if not (isinstance(args, str) and args.strip()):
        problems.append(f"arguments must be a non-empty SQL argument list, got {args!r}")
    missing = [f for f in EXPECTED_FIELDS if f not in vec]
    if missing:
        problems.append(f"missing expected field(s) {missing} (run 'fill')")
    try:
        canon = canonical_schema(vec["schema"])
        if canon != vec["schema"]:
            problems.append(f"schema is not in canonical form; canonical: {canon}")
        got = _compute_expected(vec)
    except Exception as e:  # noqa: BLE001 - report any failure of the reference itself
        return problems + [f"error: {type(e).__name__}: {e}"]
    if isinstance(vec.get("state"), str):
        try:
            if finalise_state(bytes.fromhex(vec["state"])) != got["dsha"]:
                problems.append("state: does not finalise to the vector's digest")
        except (ValueError, StateError) as e:
            problems.append(f"state: {e}")
    for f in EXPECTED_FIELDS:
        if f in vec and vec[f] != got[f]:
            if f == "row_digests" and isinstance(vec[f], list) and len(vec[f]) == len(got[f]):
                bad = [i for i, (a, b) in enumerate(zip(vec[f], got[f])) if a != b]
                problems.append(f"row_digests differ at rows {bad}: expected {[vec[f][i] for i in bad]}, "
                                f"computed {[got[f][i] for i in bad]}")
            else:
                problems.append(f"{f}: expected {vec[f]!r}, computed {got[f]!r}")
    return problems


def _load(path: str) -> dict:
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    if doc.get("algorithm") != ALGORITHM:
        raise SystemExit(f"{path}: algorithm is {doc.get('algorithm')!r}, expected {ALGORITHM!r}")
    return doc


def cmd_check(path: str) -> int:
    doc = _load(path)
    passed = failed = 0
    for vec in doc["vectors"]:
        problems = check_vector(vec)
        name = vec.get("name", "?")
        if problems:
            failed += 1
            print(f"FAIL {name}: " + "; ".join(problems))
        else:
            passed += 1
            print(f"ok   {name}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


def cmd_fill(path: str, names: List[str]) -> int:
    """Adds the missing expected fields (of the named vectors only, if names are given)."""
    doc = _load(path)
    unknown = set(names) - {vec.get("name") for vec in doc["vectors"]}
    if unknown:
        print(f"no vector named {sorted(unknown)}", file=sys.stderr)
        return 2
    filled = conflicts = errors = 0
    for vec in doc["vectors"]:
        name = vec.get("name", "?")
        if names and name not in names:
            continue
        missing = [f for f in EXPECTED_FIELDS if f not in vec]
        try:
            got = _compute_expected(vec)
        except Exception as e:  # noqa: BLE001
            errors += 1
            print(f"ERROR {name}: {type(e).__name__}: {e}")
            continue
        for f in EXPECTED_FIELDS:
            if f in vec and vec[f] != got[f]:
                conflicts += 1
                print(f"CONFLICT {name}: existing {f} {vec[f]!r} differs from computed {got[f]!r} (kept)")
        for f in missing:
            vec[f] = got[f]  # only ever add; never overwrite an existing expected value
        if missing:
            filled += 1
            print(f"filled {name}: {', '.join(missing)}")
    if filled:
        text = json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    print(f"{filled} vector(s) filled, {conflicts} conflict(s), {errors} error(s)")
    return 1 if (conflicts or errors) else 0


def cmd_manifest(path: str) -> int:
    """Checks a manifest (SPEC §12.3) and prints the digest of the merge of its files' states."""
    try:
        with open(path, "rb") as fh:
            res = check_manifest(load_manifest(fh.read()))
    except ManifestError as e:
        print(f"{path}: ignored: {e}", file=sys.stderr)
        return 1
    print(res["digest"])
    notes = []
    if res["manifest_rows"] != res["rows"]:
        notes.append(f"its rows {res['manifest_rows']} are not the files' {res['rows']}")
    if res["manifest_digest"] != res["digest"]:
        notes.append(f"its digest {res['manifest_digest']} is not the files' {res['digest']}")
    if notes:
        print(f"{path}: " + "; ".join(notes) + " (not covered by the checksum; recomputed)", file=sys.stderr)
    return 0


def main(argv: List[str]) -> int:
    cmd = argv[1] if len(argv) > 1 else None
    if cmd == "check" and len(argv) == 3:
        return cmd_check(argv[2])
    if cmd == "fill" and len(argv) >= 3:
        return cmd_fill(argv[2], argv[3:])
    if cmd == "manifest" and len(argv) == 3:
        return cmd_manifest(argv[2])
    if cmd == "meta" and len(argv) == 4:
        print(meta_digest_files(argv[3], list_local_data_files(argv[2])))
        return 0
    print(f"usage: {argv[0]} check VECTORS.json | fill VECTORS.json [NAME ...] | manifest MANIFEST.json"
          f" | meta DIR SCHEMA", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
