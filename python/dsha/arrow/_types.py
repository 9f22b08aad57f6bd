"""Arrow type -> canonical type string (SPEC.md §2.3), per the mapping in SPEC.md Appendix A."""
from __future__ import annotations

from typing import List, Sequence

import pyarrow as pa
import pyarrow.types as pat

from dsha.errors import UnsupportedTypeError

_EXTENSION_TYPE = getattr(pa, "BaseExtensionType", pa.ExtensionType)


def _is(name: str, t: pa.DataType) -> bool:
    fn = getattr(pat, name, None)
    return bool(fn(t)) if fn is not None else False


def quote_name(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def escape_surrogates(text: str) -> str:
    """``text`` with each lone UTF-16 surrogate written ``\\uXXXX`` (upper-case hex), as SPEC.md §2.1 shows it."""
    return "".join(f"\\u{ord(c):04X}" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)


def check_name(name: str, path: str) -> None:
    """SPEC.md §2.1: a name holding a lone surrogate has no UTF-8 encoding, so it is refused, never replaced."""
    if any(0xD800 <= ord(c) <= 0xDFFF for c in name):
        raise UnsupportedTypeError(f"column {escape_surrogates(path)}: the name {escape_surrogates(name)} is not "
                                   f"valid Unicode (a lone UTF-16 surrogate, which has no UTF-8 encoding); "
                                   f"dsha never replaces a character in a name, so rename the column")


def name_key(name: str) -> bytes:
    return name.encode("utf-8")  # strict: check_name has refused what has no UTF-8 encoding


def canonical_order(names: Sequence[str], where: str) -> List[int]:
    """Indices of ``names`` in canonical order (by UTF-8 bytes); duplicate names are an error."""
    seen = {}
    for n in names:
        if n in seen:
            raise UnsupportedTypeError(f"{where}: the name {n!r} appears twice (the same column twice); "
                                       f"dsha identifies columns and fields by name, so give them distinct names")
        seen[n] = True
    return sorted(range(len(names)), key=lambda i: name_key(names[i]))


def storage_type(t: pa.DataType) -> pa.DataType:
    """Unwraps extension, dictionary and run-end-encoded types to the type of their values."""
    while True:
        if isinstance(t, _EXTENSION_TYPE):
            t = t.storage_type
        elif pat.is_dictionary(t) or _is("is_run_end_encoded", t):
            t = t.value_type
        else:
            return t


def canonical_type(t: pa.DataType, path: str) -> str:
    t = storage_type(t)
    if pat.is_null(t):
        return "void"
    if pat.is_boolean(t):
        return "boolean"
    if pat.is_int8(t):
        return "tinyint"
    if pat.is_int16(t) or pat.is_uint8(t):
        return "smallint"
    if pat.is_int32(t) or pat.is_uint16(t):
        return "int"
    if pat.is_int64(t) or pat.is_uint32(t):
        return "bigint"
    if pat.is_uint64(t):
        return "decimal(20,0)"
    if pat.is_float16(t) or pat.is_float32(t):
        return "float"
    if pat.is_float64(t):
        return "double"
    if pat.is_decimal(t):
        if t.precision > 38:
            raise UnsupportedTypeError(f"column {path}: {t} has precision {t.precision} > 38, which Spark's "
                                       f"DECIMAL (and dsha-v1) cannot hold")
        return f"decimal({t.precision},{t.scale})"
    if pat.is_string(t) or pat.is_large_string(t) or _is("is_string_view", t):
        return "string"
    if (pat.is_binary(t) or pat.is_large_binary(t) or _is("is_binary_view", t)
            or pat.is_fixed_size_binary(t)):
        return "binary"
    if pat.is_date32(t) or pat.is_date64(t):
        return "date"
    if pat.is_timestamp(t):
        return "timestamp_ntz" if t.tz is None else "timestamp"
    if pat.is_time32(t) or pat.is_time64(t):
        return {"s": "time(0)", "ms": "time(3)", "us": "time(6)", "ns": "time(6)"}[t.unit]
    if pat.is_duration(t):
        return "interval day to second"
    if str(t) == "month_interval":
        return "interval year to month"
    if _is("is_interval", t) or str(t) in ("month_day_nano_interval", "day_time_interval"):
        return "interval"
    if (pat.is_list(t) or pat.is_large_list(t) or pat.is_fixed_size_list(t) or _is("is_list_view", t)
            or _is("is_large_list_view", t)):
        return f"array<{canonical_type(t.value_type, path + '[]')}>"
    if pat.is_map(t):
        k = canonical_type(t.key_type, path + ".key")
        v = canonical_type(t.item_type, path + ".value")
        return f"map<{k},{v}>"
    if pat.is_struct(t):
        fields = [t.field(i) for i in range(t.num_fields)]
        return struct_type([f.name for f in fields], [f.type for f in fields], path)
    raise UnsupportedTypeError(f"column {path}: the Arrow type {t} is not supported by dsha-v1 "
                               f"(see SPEC.md Appendix A for the types it hashes)")


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def struct_type(names: Sequence[str], types: Sequence[pa.DataType], path: str) -> str:
    for n in names:
        check_name(n, _child(path, n))
    order = canonical_order(names, f"column {escape_surrogates(path)}" if path else "columns")
    parts = [f"{quote_name(names[i])}:{canonical_type(types[i], _child(path, names[i]))}" for i in order]
    return "struct<" + ",".join(parts) + ">"


def schema_string(schema: pa.Schema) -> str:
    if len(schema) == 0:
        raise ValueError("dsha needs at least one column, and the input has none")
    return struct_type(schema.names, schema.types, "")


__all__ = ["UnsupportedTypeError", "canonical_order", "canonical_type", "check_name", "escape_surrogates",
           "schema_string", "storage_type"]
