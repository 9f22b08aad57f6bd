"""The differing rows of a diff as an aligned text table, for a person at a terminal (``dsha diff``, ``str(Diff)``).

Rows only on the left (``-``) and only on the right (``+``) are paired where they differ in few cells: the pairs with
the most equal cells first, each row in one pair at most, a pair only when its equal cells are at least as many as
its differing ones; a pair is shown as its two rows with ``^`` under the cells that differ (under the characters
that differ, in a long value). Rows left unpaired
follow, each on its own. With a key, the changed pairs are the key and the columns some pair differs in.

A small formatter of its own (no ``rich`` or ``tabulate``): the core takes no dependency, the output is plain text
that logs, CI consoles and pipes show as it is (no terminal codes), and what it does is small (widths, cuts,
carets). Values longer than ``max_chars`` are cut with ``…``, around the first difference when they differ there;
a table wider than ``width`` keeps the columns that differ and the first columns before the others (the rest named
in a note), then wraps what is still too wide into blocks of columns.
"""
from __future__ import annotations

import datetime
import math
import unicodedata
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, List, Optional, Sequence, Tuple

from dsha.core.diff_report import UNCHANGED, ChangedValue, DiffReport, RowsShown

__all__ = ["CONTEXT_COLUMNS", "MAX_CHARS", "WIDTH", "cell_text", "pair_rows", "rows_table"]

MAX_CHARS = 30  # the longest value shown whole
WIDTH = 100  # the table's width when the caller does not know the terminal's
CONTEXT_COLUMNS = 2  # equal columns kept beside the differing ones when a table is too wide (the first ones)
_WHOLE = 12  # a differing value up to this wide is marked whole; a longer one where it differs
_PAIRING_LIMIT = 250_000  # left x right rows beyond which rows are not paired (each pair compares every cell)


def cell_text(v: Any) -> str:
    """A value as a cell shows it: ``null``; strings as they are, quoted when empty, padded with spaces or spelling
    ``null``, with control characters escaped; binary as ``0x`` hex; structs, maps and arrays as ``{k: v}`` and
    ``[a, b]``; floats as Python's shortest repr; dates and timestamps in ISO form."""
    if v is None:
        return "null"
    if isinstance(v, str):
        escaped = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in v)
        if not v or v != v.strip() or v == "null" or escaped != v:
            return '"' + escaped.replace('"', '\\"') + '"'
        return v
    return _inner(v)


def _inner(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return cell_text(v) if v in ("", "null") or v != v.strip() else v
    if isinstance(v, (bytes, bytearray, memoryview)):
        return "0x" + bytes(v).hex()
    if isinstance(v, float):
        return "NaN" if math.isnan(v) else repr(v)
    if isinstance(v, datetime.datetime):
        return v.isoformat(sep=" ")
    if isinstance(v, (datetime.date, datetime.time, Decimal)):
        return str(v) if isinstance(v, Decimal) else v.isoformat()
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_inner(k)}: {_inner(x)}" for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_inner(x) for x in v) + "]"
    return str(v)


def _width(text: str) -> int:
    """Columns a terminal gives ``text``: 2 for wide East Asian characters, 0 for combining marks."""
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _pad(text: str, width: int) -> str:
    return text + " " * (width - _width(text))


def _same(a: Any, b: Any) -> bool:
    """Cells equal for pairing (NaN equals NaN, as in dsha's canonical values)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    try:
        return bool(a == b) and type(a) is type(b)
    except Exception:  # values that do not compare: by their text
        return cell_text(a) == cell_text(b)


def pair_rows(left: Sequence[Sequence[Any]], right: Sequence[Sequence[Any]]) -> List[Tuple[int, int]]:
    """Pairs (i, j) of a left and a right row that differ in few cells: most equal cells first (then the rows'
    order), each row in one pair at most, and only pairs whose equal cells are at least as many as their differing
    ones (and at least one)."""
    if not left or not right or len(left) * len(right) > _PAIRING_LIMIT:
        return []
    candidates = []
    for i, a in enumerate(left):
        for j, b in enumerate(right):
            equal = sum(_same(x, y) for x, y in zip(a, b))
            if equal >= 1 and equal >= len(a) - equal:
                candidates.append((-equal, i, j))
    used_left, used_right, pairs = set(), set(), []
    for _, i, j in sorted(candidates):
        if i not in used_left and j not in used_right:
            used_left.add(i)
            used_right.add(j)
            pairs.append((i, j))
    return sorted(pairs)


def _clip(text: str, limit: int, focus: Optional[int] = None) -> str:
    """``text`` cut to ``limit`` characters with ``…`` where it is cut; around index ``focus`` when that would not
    show otherwise."""
    if len(text) <= limit:
        return text
    if focus is None or focus < limit - 1:
        return text[: limit - 1] + "…"
    start = min(focus - limit // 2, len(text) - (limit - 1))
    if start + limit - 1 >= len(text):
        return "…" + text[start + 1:]
    return "…" + text[start + 1: start + limit - 1] + "…"


def _prefix(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _carets(shown_left: str, shown_right: str) -> Tuple[int, int]:
    """The span of ``shown_right`` (display columns) that differs from ``shown_left``: from their common prefix to
    their common suffix, at least one column."""
    p = _prefix(shown_left, shown_right)
    s = _prefix(shown_left[p:][::-1], shown_right[p:][::-1])
    start = _width(shown_right[:p])
    return start, max(1, _width(shown_right[p: len(shown_right) - s]))


@dataclass
class _Entry:
    """One line of the table (``marker`` ``-`` or ``+``), and under it, for the second row of a pair, the carets:
    per column, the (start, length) to mark, or None."""

    marker: str
    cells: List[str]
    carets: Optional[List[Optional[Tuple[int, int]]]] = None


def _pair_entries(a: Sequence[str], b: Sequence[str], differs: Sequence[bool], max_chars: int) -> List[_Entry]:
    left, right, carets = [], [], []
    for x, y, d in zip(a, b, differs):
        focus = _prefix(x, y) if d else None
        sx, sy = _clip(x, max_chars, focus), _clip(y, max_chars, focus)
        left.append(sx)
        right.append(sy)
        carets.append(None if not d else (0, max(_width(sy), 1)) if _width(sy) <= _WHOLE else _carets(sx, sy))
    return [_Entry("-", left), _Entry("+", right, carets)]


def _blocks(widths: Sequence[int], width: int) -> List[List[int]]:
    """The columns (indexes) split into consecutive blocks that each fit ``width`` (a column wider than it alone)."""
    blocks: List[List[int]] = [[]]
    used = 4  # the marker column
    for i, w in enumerate(widths):
        if blocks[-1] and used + w > width:
            blocks.append([])
            used = 4
        blocks[-1].append(i)
        used += w + 2
    return blocks


def _fitted(head: str, names: Sequence[str], tail: str, width: int) -> str:
    """``head`` + as many of ``names`` as fit ``width`` (then ``…``) + ``tail``."""
    text = head + ", ".join(names) + tail
    if _width(text) <= width:
        return text
    shown: List[str] = []
    for n in names:
        if _width(head + ", ".join([*shown, n]) + ", …" + tail) > width:
            break
        shown.append(n)
    return head + ", ".join([*shown, "…"]) + tail


def _render(columns: Sequence[str], entries: Sequence[_Entry], width: int) -> List[str]:
    """The table: a header, then each entry (and its carets), in blocks of columns that fit ``width``; columns that
    differ in no pair and do not fit are left out for the first ones and the differing ones, and named."""
    keep = list(range(len(columns)))
    widths = [max([_width(columns[i])] + [_width(e.cells[i]) for e in entries]) for i in keep]
    note = []
    if 4 + sum(w + 2 for w in widths) > width:
        differing = {i for e in entries if e.carets for i, c in enumerate(e.carets) if c is not None}
        if differing:
            context = [i for i in keep if i not in differing][:CONTEXT_COLUMNS]
            dropped = [columns[i] for i in keep if i not in differing and i not in context]
            keep = sorted(differing | set(context))
            if dropped:
                note = [_fitted(f"  ({len(dropped)} more columns, equal in every pair shown: ", dropped, ")", width)]
    lines: List[str] = []
    for block in _blocks([widths[i] for i in keep], width):
        shown = [keep[k] for k in block]
        if lines:
            lines.append("")
        lines.append(("    " + "  ".join(_pad(columns[i], widths[i]) for i in shown)).rstrip())
        for e in entries:
            lines.append((f"  {e.marker} " + "  ".join(_pad(e.cells[i], widths[i]) for i in shown)).rstrip())
            if e.carets is not None and any(e.carets[i] for i in shown):
                marks = ""
                for i in shown:
                    caret = e.carets[i]
                    cell = " " * widths[i] if caret is None else (" " * caret[0] + "^" * caret[1]).ljust(widths[i])
                    marks += cell + "  "
                lines.append(("    " + marks).rstrip())
    return lines + note


def _section(report: DiffReport, kind: str) -> Optional[RowsShown]:
    return next((s for s in report.sections if s.kind == kind), None)


def _more(shown: Optional[RowsShown], what: str) -> List[str]:
    return [f"{shown.more:,} more {what}"] if shown is not None and shown.more else []


def rows_table(report: DiffReport, width: int = WIDTH, max_chars: int = MAX_CHARS) -> List[str]:
    """The lines that show a report's differing rows: with a key the changed pairs, then the unpaired rows; without
    one, rows only left and only right, paired where they differ in few cells (``pair_rows``). Empty when the
    report shows no rows."""
    out: List[str] = []
    changed = _section(report, "changed")
    if changed is not None and changed.rows:
        out += _changed(report, changed, width, max_chars)
    only_left, only_right = _section(report, "only_left"), _section(report, "only_right")
    if (only_left and only_left.rows) or (only_right and only_right.rows):
        out += _unkeyed(report, only_left, only_right, changed is not None, width, max_chars)
    return out


def _changed(report: DiffReport, changed: RowsShown, width: int, max_chars: int) -> List[str]:
    key = report.summary.key
    entries: List[_Entry] = []
    for row in changed.rows:
        cells = list(row)
        a = [cell_text(v) for v in cells[: len(key)]]
        b = list(a)
        differs = [False] * len(key)
        for v in cells[len(key):]:
            if isinstance(v, ChangedValue):
                a.append(cell_text(v.left))
                b.append(cell_text(v.right))
                differs.append(True)
            else:
                assert v is UNCHANGED
                a.append("")
                b.append("")
                differs.append(False)
        entries += _pair_entries(a, b, differs, max_chars)
    left, right = report.names
    head = (f"changed ({len(changed.rows):,} of {changed.total:,}; key {', '.join(key)}): - {left}, + {right}, "
            "^ what differs")
    return [head, *_render(changed.columns, entries, width), *[f"  ({m})" for m in _more(changed, "changed")]]


def _unkeyed(report: DiffReport, only_left: Optional[RowsShown], only_right: Optional[RowsShown], keyed: bool,
             width: int, max_chars: int) -> List[str]:
    columns = (only_left or only_right).columns  # type: ignore[union-attr]
    left_rows = list(only_left.rows) if only_left else []
    right_rows = list(only_right.rows) if only_right else []
    pairs = [] if keyed else pair_rows(left_rows, right_rows)
    entries: List[_Entry] = []
    for i, j in pairs:
        a, b = left_rows[i], right_rows[j]
        differs = [not _same(x, y) for x, y in zip(a, b)]
        entries += _pair_entries([cell_text(x) for x in a], [cell_text(y) for y in b], differs, max_chars)
    paired_left, paired_right = {i for i, _ in pairs}, {j for _, j in pairs}
    entries += [_Entry("-", [_clip(cell_text(v), max_chars) for v in r])
                for i, r in enumerate(left_rows) if i not in paired_left]
    entries += [_Entry("+", [_clip(cell_text(v), max_chars) for v in r])
                for j, r in enumerate(right_rows) if j not in paired_right]
    left, right = report.names
    counts = [f"- only {left} ({len(left_rows):,} of {only_left.total:,})" if only_left else "",
              f"+ only {right} ({len(right_rows):,} of {only_right.total:,})" if only_right else ""]
    head = ", ".join(c for c in counts if c)
    if pairs:
        head += f"; {len(pairs):,} paired where few cells differ, ^ what differs"
    more = _more(only_left, f"only {left}") + _more(only_right, f"only {right}")
    return [head + ":", *_render(columns, entries, width), *([f"  ({', '.join(more)})"] if more else [])]
