"""Test helpers: SPEC.md §10 JSON rows + canonical schema -> Arrow arrays of the matching Arrow type (SPEC.md Appendix A),
and random schemas/rows for property tests. Uses the reference implementation only as an oracle."""
from __future__ import annotations

import decimal
import json
import os
import random
import string
from typing import Any, List, Optional

import pyarrow as pa

import dsha_reference as ref

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VECTORS = os.path.join(ROOT, "tests", "golden", "vectors.json")


class NotCarryable(Exception):
    """A canonical type that no Arrow type maps to (SPEC.md Appendix A)."""


_SIMPLE = {
    "boolean": pa.bool_(), "tinyint": pa.int8(), "smallint": pa.int16(), "int": pa.int32(), "bigint": pa.int64(),
    "float": pa.float32(), "double": pa.float64(), "string": pa.string(), "binary": pa.binary(),
    "date": pa.date32(), "timestamp": pa.timestamp("us", tz="UTC"), "timestamp_ntz": pa.timestamp("us"),
    "void": pa.null(), "interval": pa.month_day_nano_interval(),
}


def arrow_type(t: "ref.DType") -> pa.DataType:
    k = t.kind
    if k in _SIMPLE:
        return _SIMPLE[k]
    if k == "decimal":
        return pa.decimal128(t.precision, t.scale)
    if k == "time":
        if t.precision == 0:
            return pa.time32("s")
        if t.precision == 3:
            return pa.time32("ms")
        if t.precision == 6:
            return pa.time64("us")
        raise NotCarryable(t.render())
    if k == "interval_dt" and t.text == "day to second":
        return pa.duration("us")
    if k == "array":
        return pa.list_(arrow_type(t.element))
    if k == "map":
        return pa.map_(arrow_type(t.key), arrow_type(t.value))
    if k == "struct":
        return pa.struct([pa.field(n, arrow_type(ft)) for n, ft in t.fields])
    raise NotCarryable(t.render())


def _float(v):
    if isinstance(v, str):
        return {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf"), "-0.0": -0.0}[v]
    return float(v)


def py_value(t: "ref.DType", v: Any) -> Any:
    """A JSON value (SPEC.md §10) -> the Python value pyarrow converts to arrow_type(t)."""
    if v is None:
        return None
    k = t.kind
    if k in ("float", "double"):
        return _float(v)
    if k == "decimal":
        return decimal.Decimal(v)
    if k == "binary":
        return bytes.fromhex(v)
    if k == "time":
        return {0: v // 10**9, 3: v // 10**6, 6: v // 1000}[t.precision]
    if k == "interval":
        return pa.MonthDayNano([v[0], v[1], v[2] * 1000])
    if k == "array":
        return [py_value(t.element, e) for e in v]
    if k == "map":
        return [(py_value(t.key, a), py_value(t.value, b)) for a, b in v]
    if k == "struct":
        return {n: py_value(ft, v[n]) for n, ft in t.fields}
    return v


def table_of(schema: str, rows: List[dict], order: Optional[List[str]] = None) -> pa.Table:
    t = ref.parse_schema(schema)
    names = order or [n for n, _ in t.fields]
    types = dict(t.fields)
    cols = {}
    for n in names:
        at = arrow_type(types[n])
        cols[n] = pa.array([py_value(types[n], r[n]) for r in rows], type=at)
    return pa.table(cols) if cols else pa.table({})


def load_vectors():
    with open(VECTORS, encoding="utf-8") as f:
        return json.load(f)["vectors"]


# ---------------------------------------------------------------------------------------------------------------
# random schemas and rows (JSON conventions of SPEC.md §10)

_LEAVES = ["boolean", "tinyint", "smallint", "int", "bigint", "float", "double", "string", "binary", "date",
           "timestamp", "timestamp_ntz", "decimal(9,2)", "decimal(18,0)", "decimal(38,10)", "decimal(20,0)",
           "time(6)", "interval", "interval day to second"]


def random_type(rng: random.Random, depth: int = 0) -> str:
    r = rng.random()
    if depth >= 3 or r < 0.55:
        return rng.choice(_LEAVES)
    if r < 0.7:
        return f"array<{random_type(rng, depth + 1)}>"
    if r < 0.82:
        key = rng.choice(["int", "string", "bigint", "date"])
        return f"map<{key},{random_type(rng, depth + 1)}>"
    nf = rng.randint(1, 3)
    names = rng.sample(["a", "b", "Z", "é", "x y", "q\"", "_1"], nf)
    return "struct<" + ",".join(f"{ref.quote_name(n)}:{random_type(rng, depth + 1)}"
                                for n in sorted(names, key=lambda s: s.encode())) + ">"


def random_schema(rng: random.Random, ncols: int) -> str:
    names = rng.sample(["id", "a", "B", "c_d", "ü", "zz", "m", "n1", "n2"], ncols)
    return "struct<" + ",".join(f"{ref.quote_name(n)}:{random_type(rng)}"
                                for n in sorted(names, key=lambda s: s.encode())) + ">"


_TEXT = string.ascii_letters + "é漢🌍 \"\\\n"


def random_value(rng: random.Random, t: "ref.DType", null_p: float = 0.15, depth: int = 0) -> Any:
    if rng.random() < null_p:
        return None
    k = t.kind
    if k == "boolean":
        return rng.random() < 0.5
    bits = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}
    if k in bits:
        b = bits[k]
        return rng.choice([-(1 << (b - 1)), (1 << (b - 1)) - 1, 0, rng.randint(-(1 << (b - 1)), (1 << (b - 1)) - 1)])
    if k in ("float", "double"):
        c = rng.choice(["NaN", "Infinity", "-Infinity", "-0.0", 0.0, 1.5, -2.25, None])
        if c is None:
            import struct as st
            x = rng.uniform(-1e6, 1e6)
            if k == "float":
                x = st.unpack("<f", st.pack("<f", x))[0]
            return x
        return c
    if k == "decimal":
        p, s = t.precision, t.scale
        u = rng.choice([0, 10 ** p - 1, -(10 ** p - 1), rng.randint(-(10 ** p - 1), 10 ** p - 1)])
        sign = "-" if u < 0 else ""
        digits = str(abs(u)).rjust(s + 1, "0")
        return sign + (digits[:-s] + "." + digits[-s:] if s else digits)
    if k == "string":
        return "".join(rng.choice(_TEXT) for _ in range(rng.choice([0, 1, 3, 15, 16, 17, 40])))
    if k == "binary":
        return os.urandom(rng.choice([0, 1, 7, 16, 33])).hex()
    if k == "date":
        return rng.randint(-800000, 800000)
    if k in ("timestamp", "timestamp_ntz"):
        return rng.randint(-(1 << 62), 1 << 62)
    if k == "time":
        return rng.randint(0, 86_399_999_999) * 1000
    if k == "interval":
        return [rng.randint(-(1 << 31), (1 << 31) - 1), rng.randint(-(1 << 31), (1 << 31) - 1),
                rng.randint(-(1 << 52), 1 << 52)]
    if k == "interval_dt":
        return rng.randint(-(1 << 62), 1 << 62)
    if k == "array":
        return [random_value(rng, t.element, null_p, depth + 1) for _ in range(rng.choice([0, 1, 2, 5]))]
    if k == "map":
        keys = set()
        out = []
        for _ in range(rng.choice([0, 1, 2, 4])):
            key = random_value(rng, t.key, 0.0, depth + 1)
            if json.dumps(key) in keys:
                continue
            keys.add(json.dumps(key))
            out.append([key, random_value(rng, t.value, null_p, depth + 1)])
        return out
    if k == "struct":
        return {n: random_value(rng, ft, null_p, depth + 1) for n, ft in t.fields}
    raise AssertionError(k)


def random_rows(rng: random.Random, schema: str, n: int) -> List[dict]:
    t = ref.parse_schema(schema)
    return [{name: random_value(rng, ft) for name, ft in t.fields} for _ in range(n)]
