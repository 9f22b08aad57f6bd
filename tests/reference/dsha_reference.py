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

Rows are JSON values with the conventions of SPEC §10.

Command line::

    python dsha_reference.py check tests/golden/vectors.json
    python dsha_reference.py fill  tests/golden/vectors.json [NAME ...]   # only the named vectors, if given

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

    def type(self) -> DType:
        w = self.word()
        if w == "struct":
            self.expect("<")
            fields: List[Tuple[str, DType]] = []
            if not self.peek(">"):
                while True:
                    n = self.quoted()
                    self.expect(":")
                    fields.append((n, self.type()))
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
            e = self.type()
            self.expect(">")
            return DType("array", element=e)
        if w == "map":
            self.expect("<")
            k = self.type()
            self.expect(",")
            v = self.type()
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


def main(argv: List[str]) -> int:
    if len(argv) < 3 or argv[1] not in ("check", "fill") or (argv[1] == "check" and len(argv) != 3):
        print(f"usage: {argv[0]} check VECTORS.json | fill VECTORS.json [NAME ...]", file=sys.stderr)
        return 2
    return cmd_check(argv[2]) if argv[1] == "check" else cmd_fill(argv[2], argv[3:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
