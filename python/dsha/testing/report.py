"""The message of a failed ``dsha.testing.assert_equal``: what a person reads in a test log, bounded whatever the
tables (a few rows per section, each value and line shortened, the totals stated), from ``dsha.diff``'s result."""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Sequence

__all__ = ["LINE_CHARS", "MAX_ROWS_SHOWN", "VALUE_CHARS", "report", "row_text", "schema_report", "value_text"]

MAX_ROWS_SHOWN = 15  # per section; three sections of 15 and the summary stay within 60 lines
VALUE_CHARS = 40
LINE_CHARS = 200
_COLUMNS_SHOWN = 8
_SCHEMA_LINES = 12


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def value_text(v: Any) -> str:
    """A value as it is shown: strings quoted, binary in hex, null as ``null``; at most ``VALUE_CHARS``."""
    if v is None:
        text = "null"
    elif isinstance(v, (str, float)):
        text = repr(v)
    elif isinstance(v, (bytes, bytearray)):
        text = "0x" + bytes(v).hex()
    elif isinstance(v, (list, dict, tuple)):
        text = repr(v)
    else:
        text = str(v)  # numbers, Decimal, dates and timestamps
    return _short(text, VALUE_CHARS)


def row_text(row: Sequence[Any], columns: Sequence[str]) -> str:
    """``name=value, ...`` in the table's column order, at most ``LINE_CHARS``."""
    return _short(", ".join(f"{c}={value_text(row[i])}" for i, c in enumerate(columns)), LINE_CHARS)


def _n(count: Optional[int]) -> str:
    return "?" if count is None else f"{count:,}"


def _section(title: str, shown: List[str], total: int) -> List[str]:
    if total <= 0:
        return []
    head = f"{title} ({len(shown)} of {total:,}):" if len(shown) < total else f"{title} ({total:,}):"
    return [head] + [f"  {line}" for line in shown]


def _sample(df: Any, n: int) -> List[str]:
    columns = list(df.columns)
    return [row_text(r, columns) for r in df.limit(n).collect()]


def _column_counts(columns: Dict[str, int]) -> List[str]:
    differing = sorted(((n, c) for c, n in columns.items() if n), key=lambda nc: -nc[0])
    if not differing:
        return []
    shown = ", ".join(f"{c} {n:,}" for n, c in differing[:_COLUMNS_SHOWN])
    more = len(differing) - _COLUMNS_SHOWN
    return [_short("columns that differ (rows): " + shown + (f", and {more} more" if more > 0 else ""),
                   LINE_CHARS)]


def _changes(d: Any, n: int, string_columns: Iterable[str]) -> List[str]:
    """``key=...: column actual -> expected`` lines, the first ``n`` changed values."""
    column, left_value, right_value = d.change_names
    strings = set(string_columns)
    shown = lambda c, v: value_text(v) if v is None or c in strings else _short(str(v), VALUE_CHARS)
    lines = []
    for r in d.changed.limit(n).collect():
        key = ", ".join(f"{k}={value_text(r[k])}" for k in d.key)
        lines.append(_short(f"{key}: {r[column]} {shown(r[column], r[left_value])} -> "
                            f"{shown(r[column], r[right_value])}", LINE_CHARS))
    return lines


def report(rows: Any, d: Any, max_rows: int, notes: Sequence[str] = ()) -> str:
    """The message: the table row counts (``rows``: the two sides' counts), the differing rows of ``d`` (a
    ``dsha.Diff`` of actual against expected) counted, the first ``max_rows`` of each kind, per-column counts."""
    lines = [f"DataFrames differ: actual has {_n(rows[0])} rows, expected {_n(rows[1])}"]
    counts = f"{d.only_left_count:,} rows only in actual, {d.only_right_count:,} only in expected"
    if d.key:
        counts = f"{d.changed_count:,} rows changed (key {', '.join(d.key)}), " + counts
    lines.append("  " + counts + " (duplicates count)")
    if d.key and d.duplicate_keys:
        lines.append(f"  {d.duplicate_keys:,} keys are on several differing rows of a side: shown unpaired")
    lines += [f"  {note}" for note in notes]
    lines += [f"  {line}" for line in _column_counts(d.columns)]
    if d.key and d.changed_count:
        strings = [f.name for f in d.only_left.schema.fields if type(f.dataType).__name__ in ("StringType",
                                                                                            "VarcharType", "CharType")]
        changed_values = sum(d.columns.values())
        lines += _section("changed values, actual -> expected", _changes(d, max_rows, strings), changed_values)
    lines += _section("only in actual", _sample(d.only_left, max_rows), d.only_left_count)
    lines += _section("only in expected", _sample(d.only_right, max_rows), d.only_right_count)
    return "\n".join(lines)


def schema_report(rows: Any, explanation: str) -> str:
    """The message when the schemas differ (``explanation``: ``dsha.diff``'s schema report), with the row counts."""
    found = explanation.splitlines()
    if found and found[0] == "schemas differ:":  # dsha.diff's left and right are actual and expected here
        found[0] = "schemas differ (actual -> expected):"
    if len(found) > _SCHEMA_LINES:
        found = [*found[:_SCHEMA_LINES], f"  ... and {len(found) - _SCHEMA_LINES} more"]
    return "\n".join([f"DataFrames differ: actual has {_n(rows[0])} rows, expected {_n(rows[1])}"]
                     + [_short(line, LINE_CHARS) for line in found])
