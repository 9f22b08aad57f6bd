"""JSON Lines files as Spark reads them with dsha's reader options (SPEC.md Appendix A, "JSON"): the column types
are Spark's inference (``JsonInferSchema``) computed here over every line of every file, and each value is read as
Spark's parser converts it to that type.

Two passes over the files, so memory stays bounded by the batch size: the first infers the schema, the second
converts the rows. Where Spark's result cannot be reproduced exactly — or where Spark 3.5 and 4.x themselves read a
value differently — the file is refused with its name, the line and the field, and a pointer to ``--engine spark``.
"""
from __future__ import annotations

import decimal
import io
import json
import re
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import pyarrow as pa

from dsha.errors import UnsupportedTypeError

# A Spark type: ("null",), ("bigint",), ("double",), ("boolean",), ("string",), ("decimal", p, s),
# ("array", element), ("struct", ((name, type), ...)) with the fields sorted as Spark sorts them.
SparkType = Tuple[Any, ...]
NULL: SparkType = ("null",)
LONG: SparkType = ("bigint",)
DOUBLE: SparkType = ("double",)
BOOLEAN: SparkType = ("boolean",)
STRING: SparkType = ("string",)

_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1
_MAX_PRECISION = 38
_MAX_NUMBER_CHARS = 1000  # Jackson's StreamReadConstraints: a longer number is a malformed record to Spark
_CORRUPT = "_corrupt_record"  # Spark's column for malformed records: a field of that name is not read as data
_REFUSED = "the Arrow engine reads JSON only where it reads it as Spark does; hash this file with --engine spark"
_WS = re.compile(r"[ \t\n\r]*")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
_TO_ESCAPE = re.compile('["\\\\\x00-\x1f\U00010000-\U0010ffff]')


class _Refusal(Exception):
    """What makes a line unreadable the way Spark reads it (the caller adds the file and the line)."""


def _number(text: str, parse: Callable[[str], Any]) -> Any:
    if len(text) >= _MAX_NUMBER_CHARS:
        raise _Refusal(f"a number of {len(text)} characters (Spark's JSON parser stops at 1000)")
    return parse(text)


def _object(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen = set()
        name = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise _Refusal(f"the field {name!r} twice in one object")
    return obj


_DECODER = json.JSONDecoder(object_pairs_hook=_object, parse_int=lambda s: _number(s, int),
                            parse_float=lambda s: _number(s, float))
_PLAIN = json.JSONDecoder()


def _utf16(name: str) -> bytes:
    """Java's String.compareTo order (UTF-16 code units), which Spark sorts inferred fields by."""
    return name.encode("utf-16-be")


def _check_no_surrogates(value: Any) -> None:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise _Refusal("a lone UTF-16 surrogate (\\ud800-\\udfff) in a string or a name: Spark replaces it by '?'"
                       ) from None


def parse_line(line: str) -> Optional[Dict[str, Any]]:
    """The object of one line, or None for a blank line (which Spark skips)."""
    if not line.strip(" \t\r\n"):
        return None
    try:
        value = _DECODER.decode(line)
    except (ValueError, RecursionError) as e:
        if isinstance(e, _Refusal):
            raise
        raise _Refusal(f"not a JSON document Spark reads as Python reads it ({str(e).splitlines()[0]}); Spark "
                       f"would add a {_CORRUPT} column") from None
    if not isinstance(value, dict):
        raise _Refusal(f"a line that is not a JSON object but a {type(value).__name__} (Spark reads a top-level "
                       f"array as rows and anything else as a corrupt record)")
    if _SURROGATE_ESCAPE.search(line):
        _check_no_surrogates(value)
    return value


# -- inference (Spark's JsonInferSchema.inferField, compatibleType and canonicalizeType) -------------------------

def infer(value: Any) -> SparkType:
    if value is None or value == "":  # Spark: an empty string is inferred as null
        return NULL
    if isinstance(value, bool):
        return BOOLEAN
    if isinstance(value, int):
        if _LONG_MIN <= value <= _LONG_MAX:
            return LONG
        digits = len(str(abs(value)))  # Jackson's BIG_INTEGER: a decimal of its digits, or a double beyond 38
        return ("decimal", digits, 0) if digits <= _MAX_PRECISION else DOUBLE
    if isinstance(value, float):
        return DOUBLE
    if isinstance(value, str):
        return STRING
    if isinstance(value, list):
        element = NULL
        for v in value:
            element = merge(element, infer(v))
        return ("array", element)
    return ("struct", tuple(sorted(((k, infer(v)) for k, v in value.items()), key=lambda f: _utf16(f[0]))))


def _as_decimal(t: SparkType) -> SparkType:
    return ("decimal", 20, 0) if t == LONG else t  # DecimalType.forType(LongType)


def _wider(d: SparkType, other: SparkType) -> bool:
    return bool(d[1] - d[2] >= other[1] - other[2] and d[2] >= other[2])


def merge(a: SparkType, b: SparkType) -> SparkType:
    """Spark's ``JsonInferSchema.compatibleType`` for the types inference produces."""
    if a == b:
        return a
    if a == NULL:
        return b
    if b == NULL:
        return a
    kinds = {a[0], b[0]}
    if kinds == {"bigint", "double"} or kinds == {"decimal", "double"}:
        return DOUBLE
    if kinds <= {"bigint", "decimal"}:
        x, y = _as_decimal(a), _as_decimal(b)
        if a == LONG and _wider(y, x):
            return b
        if b == LONG and _wider(x, y):
            return a
        scale = max(x[2], y[2])
        whole = max(x[1] - x[2], y[1] - y[2])
        return DOUBLE if whole + scale > _MAX_PRECISION else ("decimal", whole + scale, scale)
    if kinds == {"array"}:
        return ("array", merge(a[1], b[1]))
    if kinds == {"struct"}:
        fields = dict(a[1])
        for name, t in b[1]:
            fields[name] = merge(fields[name], t) if name in fields else t
        return ("struct", tuple(sorted(fields.items(), key=lambda f: _utf16(f[0]))))
    return STRING  # any other pair: Spark reads both as text


def _check_names(t: SparkType, where: str) -> None:
    """Names equal but for case in one struct: Spark fails (COLUMN_ALREADY_EXISTS) or merges them by the order its
    tasks finish."""
    if t[0] == "array":
        _check_names(t[1], where + "[]")
    elif t[0] == "struct":
        seen: Dict[str, str] = {}
        for name, ft in t[1]:
            for key in {name.lower(), name.upper().lower(), name.casefold()}:
                if key in seen and seen[key] != name:
                    raise _Refusal(f"the fields {where}{seen[key]!r} and {where}{name!r} differ only by case "
                                   f"(Spark refuses or merges them)")
                seen[key] = name
            _check_names(ft, f"{where}{name}.")


def canonical(t: SparkType) -> Optional[SparkType]:
    """Spark's ``canonicalizeType``: null becomes string; empty structs, fields with an empty name, and arrays of
    what is dropped are dropped."""
    if t == NULL:
        return STRING
    if t[0] == "array":
        element = canonical(t[1])
        return None if element is None else ("array", element)
    if t[0] == "struct":
        fields = tuple((n, c) for n, ft in t[1] if n != "" for c in [canonical(ft)] if c is not None)
        return ("struct", fields) if fields else None
    return t


def arrow_type(t: SparkType) -> pa.DataType:
    kind = t[0]
    if kind == "array":
        return pa.list_(arrow_type(t[1]))
    if kind == "struct":
        return pa.struct([pa.field(n, arrow_type(ft)) for n, ft in t[1]])
    if kind == "decimal":
        return pa.decimal128(t[1], t[2])
    return {"bigint": pa.int64(), "double": pa.float64(), "boolean": pa.bool_(), "string": pa.string()}[kind]


def simple_string(t: SparkType) -> str:
    """Spark's ``simpleString`` of a type (for messages and tests)."""
    if t[0] == "array":
        return f"array<{simple_string(t[1])}>"
    if t[0] == "struct":
        return "struct<" + ",".join(f"{n}:{simple_string(ft)}" for n, ft in t[1]) + ">"
    return f"decimal({t[1]},{t[2]})" if t[0] == "decimal" else t[0]


# -- values (Spark's JacksonParser.makeConverter) --------------------------------------------------------------

def _quote(s: str) -> str:
    def escape(m: re.Match[str]) -> str:
        c = m.group(0)
        if c in _ESCAPES:
            return _ESCAPES[c]
        if len(c.encode("utf-16-be")) == 4:  # Jackson 2.15's generator writes a supplementary character escaped
            units = c.encode("utf-16-be")
            return f"\\u{units[:2].hex().upper()}\\u{units[2:].hex().upper()}"
        return f"\\u{ord(c):04X}"
    return '"' + _TO_ESCAPE.sub(escape, s) + '"'


def jackson_text(value: Any) -> str:
    """What Spark 3.5 writes for a non-string value in a string column (Jackson's generator, compact). Floats are
    refused: their text is Java's Double.toString, whose digits depend on the JDK."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        raise _Refusal("a floating-point number inside a value Spark reads as a string (its text is Java's "
                       "Double.toString in Spark 3.5, the number as written in Spark 4)")
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, list):
        return "[" + ",".join(jackson_text(v) for v in value) + "]"
    return "{" + ",".join(f"{_quote(k)}:{jackson_text(v)}" for k, v in value.items()) + "}"


def _skip(line: str, at: int) -> int:
    return _WS.match(line, at).end()  # type: ignore[union-attr]


def source_text(line: str, path: Sequence[Any]) -> str:
    """The text of the value at ``path`` (field names and array indexes) in the line, as written: Spark 4 reads a
    non-string value into a string column as these bytes."""
    at = _skip(line, 0)
    for step in path:
        opening, closing = ("[", "]") if isinstance(step, int) else ("{", "}")
        assert line[at] == opening
        at, index = _skip(line, at + 1), 0
        while True:
            if isinstance(step, str):
                name, at = scanstring(line, at + 1)
                at = _skip(line, _skip(line, at) + 1)  # past the ':'
                if name == step:
                    break
            elif index == step:
                break
            _, at = _PLAIN.raw_decode(line, at)
            at = _skip(line, at)
            assert line[at] != closing
            at, index = _skip(line, at + 1), index + 1  # past the ','
    _, end = _PLAIN.raw_decode(line, at)
    return line[at:end]


def _field(path: Sequence[Any]) -> str:
    return "".join("[]" if isinstance(p, int) else (f".{p}" if i else p) for i, p in enumerate(path))


def _as_string(value: Any, line: str, path: Tuple[Any, ...]) -> str:
    text = jackson_text(value)
    if source_text(line, path) != text:
        raise _Refusal(f"the field {_field(path)} is read as a string, and its value {source_text(line, path)} "
                       f"is not written as Spark 3.5 writes it ({text}), which Spark 4 keeps as written")
    return text


def convert(value: Any, t: SparkType, line: str, path: Tuple[Any, ...]) -> Any:
    """The value Spark's parser gives ``value`` as type ``t`` (Python, for pyarrow)."""
    if value is None:
        return None
    kind = t[0]
    if kind == "string":
        return value if isinstance(value, str) else _as_string(value, line, path)
    if isinstance(value, str):  # only "" reaches another type: inference takes it for null
        if len(path) == 1:
            return None  # Spark fails to convert it and, with partial results, leaves the field null
        raise _Refusal(f"an empty string in the field {_field(path)} of type {simple_string(t)} (Spark leaves "
                       f"the struct or array around it partly or wholly null)")
    if kind == "struct":
        return {n: convert(value.get(n), ft, line, (*path, n)) for n, ft in t[1]}
    if kind == "array":
        return [convert(v, t[1], line, (*path, i)) for i, v in enumerate(value)]
    if kind == "double":
        try:
            return float(value)
        except OverflowError:  # an integer beyond the double range: Java's BigInteger.doubleValue is infinite
            return float("inf") if value > 0 else float("-inf")
    if kind == "decimal":
        return decimal.Decimal(value)
    return value


# -- files ------------------------------------------------------------------------------------------------------

def _lines(path: str) -> Iterator[Tuple[int, str]]:
    """(1-based number, text) of each line; lines end at \\n, \\r or \\r\\n, as Hadoop's line reader ends them."""
    with pa.input_stream(path, compression="detect") as stream:
        text = io.TextIOWrapper(stream, encoding="utf-8", errors="strict", newline=None)
        number = 0
        try:
            for number, line in enumerate(text, 1):
                yield number, line
        except UnicodeDecodeError as e:
            raise UnsupportedTypeError(f"JSON file {path}, after line {number}: not UTF-8 ({e.reason}); "
                                       f"{_REFUSED}") from None


def _rows(path: str) -> Iterator[Tuple[int, str, Dict[str, Any]]]:
    for number, line in _lines(path):
        try:
            row = parse_line(line)
        except _Refusal as e:
            raise UnsupportedTypeError(f"JSON file {path}, line {number}: {e}; {_REFUSED}") from None
        if row is not None:
            yield number, line, row


def infer_schema(files: Sequence[str]) -> SparkType:
    """Spark's inferred schema of the files' lines, as a struct type."""
    root: SparkType = ("struct", ())
    for f in files:
        for _, _, row in _rows(f):
            root = merge(root, infer(row))
    where = files[0] if len(files) == 1 else f"{len(files)} files under {files[0]}"
    try:
        _check_names(root, "")
    except _Refusal as e:
        raise UnsupportedTypeError(f"JSON {where}: {e}; {_REFUSED}") from None
    if any(n == _CORRUPT for n, _ in root[1]):
        raise UnsupportedTypeError(f"JSON {where}: a field named {_CORRUPT}, Spark's column for malformed lines, "
                                   f"which it leaves null; {_REFUSED}")
    schema = canonical(root)
    if schema is None:
        raise UnsupportedTypeError(f"JSON {where}: no field with a value (every line is empty or holds only empty "
                                   f"objects and names), so there are no columns to hash")
    return schema


def _batch(values: List[List[Any]], schema: pa.Schema) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([pa.array(v, schema.field(i).type) for i, v in enumerate(values)],
                                      schema=schema)


def json_batches(files: Sequence[str], columns: Optional[Sequence[str]], batch_size: int,
                 select: Callable[[pa.Schema, Optional[Sequence[str]]], List[str]]
                 ) -> Tuple[pa.Schema, Iterator[pa.RecordBatch]]:
    """(schema, batches) of JSON Lines files read as Spark reads them."""
    if not files:
        raise UnsupportedTypeError("no JSON file to read, so there are no columns to hash (Spark cannot infer a "
                                   "schema either)")
    fields = dict(infer_schema(files)[1])
    schema = pa.schema([pa.field(n, arrow_type(t)) for n, t in fields.items()])
    cols = select(schema, columns)
    selected = pa.schema([schema.field(c) for c in cols])
    types = [fields[c] for c in cols]

    def gen() -> Iterator[pa.RecordBatch]:
        values: List[List[Any]] = [[] for _ in cols]
        rows = 0
        for f in files:
            for number, line, row in _rows(f):
                for i, (c, t) in enumerate(zip(cols, types)):
                    try:
                        values[i].append(convert(row.get(c), t, line, (c,)))
                    except _Refusal as e:
                        raise UnsupportedTypeError(f"JSON file {f}, line {number}: {e}; {_REFUSED}") from None
                rows += 1
                if rows == batch_size:
                    yield _batch(values, selected)
                    values, rows = [[] for _ in cols], 0
        if rows:
            yield _batch(values, selected)

    return selected, gen()


__all__ = ["SparkType", "arrow_type", "canonical", "convert", "infer", "infer_schema", "jackson_text",
           "json_batches", "merge", "parse_line", "simple_string", "source_text"]
