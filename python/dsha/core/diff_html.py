"""The HTML of a diff report (``dsha.core.diff_report.DiffReport``): a self-contained page (``Diff.to_html``,
``dsha diff --html``) or a fragment for notebooks (``Diff._repr_html_``); and the notebook display of a
``Fingerprint``, a ``Comparison`` and ``dsha.changed``'s ``Changes``, in the same style.

No script, no network: the style is inline and scoped to ``.dsha-diff``, its colours translucent so that the report
reads on light and dark notebook themes alike (the page follows the reader's colour scheme). Every name and value is
escaped; control characters and lone surrogates are shown as escapes; a long value is cut, visibly, with the number
of characters left out. Null, NaN and infinities, binary, empty strings and nested values each have their own look.
"""
from __future__ import annotations

import datetime
import decimal
import html
import json
import math
import re
from typing import Any, Dict, List, Optional, Tuple

from dsha.core.diff_report import UNCHANGED, ChangedValue, DiffReport, DiffSummary, RowsShown

__all__ = ["MAX_CHARS", "changes_html", "comparison_html", "fingerprint_html", "page", "render", "value_html"]

MAX_CHARS = 200  # characters of a value shown before it is cut

_CSS = """
.dsha-diff { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; font-size: 13px;
  line-height: 1.45; color: inherit; max-width: 100%; overflow-x: auto; }
.dsha-diff h2 { font-size: 1.3em; margin: 0.2em 0 0.6em; }
.dsha-diff h3 { font-size: 1.08em; margin: 1.3em 0 0.4em; }
.dsha-diff table { border-collapse: collapse; margin: 0.3em 0; }
.dsha-diff th, .dsha-diff td { border: 1px solid rgba(127, 127, 127, 0.4); padding: 2px 8px; text-align: left;
  vertical-align: top; }
.dsha-diff thead th, .dsha-diff tbody th { background: rgba(127, 127, 127, 0.13); font-weight: 600; }
.dsha-diff .dsha-num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.dsha-diff .dsha-v, .dsha-diff code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  white-space: pre-wrap; overflow-wrap: anywhere; }
.dsha-diff td.dsha-v { max-width: 48em; }
.dsha-diff td.dsha-scalar { white-space: nowrap; }
.dsha-diff .dsha-type { font-weight: normal; opacity: 0.7; font-size: 0.9em; }
.dsha-diff .dsha-status { display: inline-block; padding: 1px 10px; border-radius: 10px; font-weight: 600; }
.dsha-diff .dsha-equal { background: rgba(34, 160, 80, 0.25); }
.dsha-diff .dsha-differ { background: rgba(220, 50, 50, 0.25); }
.dsha-diff .dsha-left { background: rgba(220, 50, 50, 0.13); }
.dsha-diff .dsha-right { background: rgba(34, 160, 80, 0.13); }
.dsha-diff .dsha-null { font-style: italic; color: rgb(128, 128, 128); }
.dsha-diff .dsha-nan { font-style: italic; color: rgb(205, 120, 0); }
.dsha-diff .dsha-bin { color: rgb(60, 130, 230); }
.dsha-diff .dsha-nested { color: rgb(160, 90, 230); }
.dsha-diff .dsha-empty { font-style: italic; color: rgb(128, 128, 128); }
.dsha-diff .dsha-esc { color: rgb(205, 120, 0); }
.dsha-diff .dsha-same { opacity: 0.45; }
.dsha-diff .dsha-arrow { opacity: 0.6; }
.dsha-diff .dsha-cut { font-style: italic; opacity: 0.75; white-space: nowrap; }
.dsha-diff .dsha-more, .dsha-diff .dsha-note { font-style: italic; opacity: 0.85; }
.dsha-diff .dsha-bar { display: inline-block; height: 0.75em; background: rgba(60, 130, 230, 0.65);
  border-radius: 2px; vertical-align: middle; }
"""

_PAGE_CSS = """
:root { color-scheme: light dark; }
body { margin: 1.5em; }
"""

# Characters that would not show, or not as themselves: C0 and C1 controls but tab and newline, and lone surrogates.
_UNSHOWN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def _text(s: str) -> str:
    """``s`` escaped for HTML, each character that would not show as itself written as a visible escape."""
    out: List[str] = []
    last = 0
    for m in _UNSHOWN.finditer(s):
        out.append(html.escape(s[last:m.start()], quote=True))
        c = ord(m.group())
        escape = f"x{c:02x}" if c < 0x100 else f"u{c:04x}"
        out.append(f'<span class="dsha-esc">\\{escape}</span>')
        last = m.end()
    out.append(html.escape(s[last:], quote=True))
    return "".join(out)


def _cut(s: str, max_chars: int) -> str:
    """``s`` as HTML, cut after ``max_chars`` characters with a visible mark of how many were left out."""
    if len(s) <= max_chars:
        return _text(s)
    left_out = len(s) - max_chars
    return f'{_text(s[:max_chars])}<span class="dsha-cut">… (+{left_out:,} chars)</span>'


def _float_text(v: float) -> Optional[str]:
    """NaN and the infinities by name, else None."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return None


def _scalar_text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return _float_text(v) or repr(v)
    if isinstance(v, datetime.datetime):
        return v.isoformat(sep=" ")
    if isinstance(v, (datetime.date, datetime.time, datetime.timedelta, decimal.Decimal, int)):
        return str(v)
    return str(v)


def _nested_text(v: Any) -> str:
    """A value inside an array, map or struct, as compact JSON-like text (strings quoted, null, NaN, 0x binary)."""
    if v is None:
        return "null"
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (bytes, bytearray)):
        return "0x" + bytes(v).hex()
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_nested_text(k)}: {_nested_text(x)}" for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_nested_text(x) for x in v) + "]"
    return _scalar_text(v)


def value_html(v: Any, max_chars: int = MAX_CHARS) -> str:
    """One value as HTML: null, NaN and infinities, binary (hex), empty strings and nested values each in their own
    class; text escaped, cut after ``max_chars`` characters."""
    if v is None:
        return '<span class="dsha-null">null</span>'
    if isinstance(v, float) and _float_text(v) is not None:
        return f'<span class="dsha-nan">{_float_text(v)}</span>'
    if isinstance(v, (bytes, bytearray)):
        return f'<span class="dsha-bin">{_cut("0x" + bytes(v).hex(), max_chars)}</span>'
    if isinstance(v, (dict, list, tuple)):
        return f'<span class="dsha-nested">{_cut(_nested_text(v), max_chars)}</span>'
    if isinstance(v, str):
        return _cut(v, max_chars) if v else '<span class="dsha-empty">(empty string)</span>'
    return _cut(_scalar_text(v), max_chars)


def _n(count: Optional[int]) -> str:
    return "?" if count is None else f"{count:,}"


def _row(field: str, label: str, value_html_: str, numeric: bool = False) -> str:
    cls = ' class="dsha-num"' if numeric else ""
    return f'<tr data-field="{field}"><th>{_text(label)}</th><td{cls}>{value_html_}</td></tr>'


def _summary(s: DiffSummary, names: Tuple[str, str]) -> str:
    left, right = names
    rows = [_row("algorithm", "algorithm", f"<code>{_text(s.algorithm)}</code>"),
            _row("method", "method", _text(s.method))]
    if s.key:
        rows.append(_row("key", "key", ", ".join(f"<code>{_text(k)}</code>" for k in s.key)))
    rows += [_row("left_rows", f"rows in {left}", _n(s.left_rows), True),
             _row("right_rows", f"rows in {right}", _n(s.right_rows), True)]
    if not s.schema:
        rows += [_row("only_left", f"rows only in {left}", _n(s.only_left), True),
                 _row("only_right", f"rows only in {right}", _n(s.only_right), True)]
        if s.key:
            rows.append(_row("changed", "rows changed (paired by key)", _n(s.changed), True))
            if s.duplicate_keys:
                rows.append(_row("duplicate_keys", "keys on several differing rows of a side (not paired)",
                                 _n(s.duplicate_keys), True))
    rows += [_row("left_digest", f"digest of {left}", f"<code>{_text(s.left_digest or '—')}</code>"),
             _row("right_digest", f"digest of {right}", f"<code>{_text(s.right_digest or '—')}</code>")]
    return '<table class="dsha-summary"><tbody>' + "".join(rows) + "</tbody></table>"


def _schema(s: DiffSummary, names: Tuple[str, str]) -> str:
    if not s.schema:
        return ""
    left, right = names
    rows = [(n, "added", "—", t) for n, t in s.schema.added]
    rows += [(n, "removed", t, "—") for n, t in s.schema.removed]
    rows += [(n, "retyped", a, b) for n, a, b in s.schema.retyped]
    body = "".join(f'<tr data-change="{change}"><td class="dsha-v">{_text(n)}</td><td>{change}</td>'
                   f'<td class="dsha-left"><code>{_text(a)}</code></td>'
                   f'<td class="dsha-right"><code>{_text(b)}</code></td></tr>' for n, change, a, b in rows)
    return ('<h3>Schemas differ</h3><p class="dsha-note">No rows were compared: diff the columns both sides have '
            f'(<code>columns=[...]</code>).</p><table class="dsha-schema"><thead><tr><th>column</th><th>change</th>'
            f"<th>type in {_text(left)}</th><th>type in {_text(right)}</th></tr></thead><tbody>{body}</tbody></table>")


def _columns(s: DiffSummary) -> str:
    differing = s.differing_columns
    digests = dict(s.column_digests)
    shown = [c for c, _ in differing] + [c for c in s.digest_differs if c not in dict(differing)]
    if not shown:
        return ""
    counts = dict(differing)
    top = max(counts.values(), default=0)
    head = "<th>column</th><th>differing rows</th><th></th>" + ("<th>column digests</th>" if digests else "")
    body = []
    for c in sorted(shown, key=lambda c: -counts.get(c, 0)):
        n = counts.get(c, 0)
        width = round(120 * n / top) if top else 0
        digest = ""
        if digests:
            digest = "<td>" + ("equal" if digests.get(c, True) else "differ") + "</td>"
        body.append(f'<tr data-column="{_text(c)}"><td class="dsha-v">{_text(c)}</td>'
                    f'<td class="dsha-num">{n:,}</td><td><span class="dsha-bar" style="width: {width}px"></span>'
                    f"</td>{digest}</tr>")
    others = len(s.columns or ()) - len(shown)
    note = (f'<p class="dsha-note">{others:,} other column{"s differ" if others != 1 else " differs"} in no row.</p>'
            if others > 0 else "")
    return (f'<h3>Columns that differ</h3><table class="dsha-columns"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table>{note}')


def _titles(names: Tuple[str, str]) -> Dict[str, str]:
    return {"only_left": f"Rows only in {names[0]}", "only_right": f"Rows only in {names[1]}",
            "changed": f"Changed rows (paired by key), {names[0]} → {names[1]}"}


def _section(rows: RowsShown, report: DiffReport, max_chars: int) -> str:
    if rows.total <= 0:
        return ""
    title = _titles(report.names)[rows.kind]
    count = (f"{len(rows.rows):,} of {rows.total:,}" if rows.more else f"{rows.total:,}")
    head = "".join(f'<th>{_text(c)}<br><span class="dsha-type">{_text(t)}</span></th>'
                   for c, t in zip(rows.columns, rows.types))
    side = {"only_left": "dsha-left", "only_right": "dsha-right"}.get(rows.kind, "")
    body = []
    for r in rows.rows:
        cells = []
        for v in r:
            if isinstance(v, ChangedValue):
                cells.append(f'<td class="dsha-v dsha-changed"><span class="dsha-left">{value_html(v.left, max_chars)}'
                             f'</span> <span class="dsha-arrow">→</span> '
                             f'<span class="dsha-right">{value_html(v.right, max_chars)}</span></td>')
            elif v is UNCHANGED:
                cells.append('<td class="dsha-v dsha-same" title="unchanged">=</td>')
            else:
                scalar = not isinstance(v, (str, bytes, bytearray, dict, list, tuple))
                cells.append(f'<td class="dsha-v{" dsha-scalar" if scalar else ""}">{value_html(v, max_chars)}</td>')
        opening = f'<tr class="{side}">' if side else "<tr>"
        body.append(opening + "".join(cells) + "</tr>")
    more = ""
    if rows.more:
        more = (f'<p class="dsha-more" data-more="{rows.more}">{rows.more:,} more not shown (at most '
                f"{report.max_rows:,} rows a table).</p>")
    return (f'<h3>{_text(title)} <span class="dsha-type">({count})</span></h3>'
            f'<table class="dsha-rows" data-section="{rows.kind}" data-total="{rows.total}">'
            f'<thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>{more}')


def render(report: DiffReport, document: bool = True, max_chars: int = MAX_CHARS) -> str:
    """The report as HTML: a whole page (``document=True``) or a ``<div>`` with its own scoped style (notebooks)."""
    s = report.summary
    status = "equal" if s.equal else "differ"
    verdict = "equal" if s.equal else ("schemas differ" if s.schema else "differ")
    heading = (f'<h2>dsha diff: {_text(report.names[0])} vs {_text(report.names[1])} '
               f'<span class="dsha-status dsha-{status}" data-equal="{str(s.equal).lower()}">{verdict}</span></h2>')
    parts = [heading, _summary(s, report.names), _schema(s, report.names), _columns(s)]
    parts += [_section(rows, report, max_chars) for rows in report.sections]
    body = f'<div class="dsha-diff"><style>{_CSS}</style>' + "".join(parts) + "</div>"
    if not document:
        return body
    title = f"dsha diff: {report.names[0]} vs {report.names[1]} ({verdict})"
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{_text(title)}</title><style>{_PAGE_CSS}</style></head><body>{body}</body></html>\n")


def page(report: DiffReport, path: Optional[str] = None, max_chars: int = MAX_CHARS) -> str:
    """The report as one whole page (``to_html`` of ``Diff`` and ``ArrowDiff``), written to ``path`` (a local file,
    UTF-8, replaced if it exists) when one is given, and returned."""
    html = render(report, document=True, max_chars=max_chars)
    if path is not None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(html)
    return html


def _fragment(title: str, equal: Optional[bool], verdict: str, body: str) -> str:
    badge = "" if equal is None else (
        f' <span class="dsha-status dsha-{"equal" if equal else "differ"}" data-equal="{str(equal).lower()}">'
        f"{_text(verdict)}</span>")
    return f'<div class="dsha-diff"><style>{_CSS}</style><h2>{_text(title)}{badge}</h2>{body}</div>'


def fingerprint_html(fp: Any) -> str:
    """A ``Fingerprint`` (digest, rows, algorithm, schema, schema digest, content sum) for a notebook."""
    rows = [_row("digest", "digest", f"<code>{_text(fp.digest)}</code>"),
            _row("rows", "rows", _n(fp.rows) if fp.rows >= 0 else "unknown (file metadata only)", True),
            _row("algorithm", "algorithm", f"<code>{_text(fp.algorithm)}</code>"),
            _row("schema", "schema", f'<code class="dsha-v">{_cut(fp.schema, 10 * MAX_CHARS)}</code>'),
            _row("schema_digest", "schema digest", f"<code>{_text(fp.schema_digest)}</code>"),
            _row("content_sum", "content sum", f"<code>{_text(fp.content_sum)}</code>")]
    return _fragment("dsha fingerprint", None, "", '<table class="dsha-summary"><tbody>' + "".join(rows)
                     + "</tbody></table>")


def comparison_html(cmp: Any) -> str:
    """A ``Comparison`` of two fingerprints, side by side, the parts that differ marked, for a notebook."""
    left, right = cmp.left, cmp.right
    parts = [("digest", left.digest, right.digest), ("rows", _n(left.rows), _n(right.rows)),
             ("algorithm", left.algorithm, right.algorithm), ("schema", left.schema, right.schema)]
    body = []
    for name, a, b in parts:
        marks = (' class="dsha-left"', ' class="dsha-right"') if a != b else ("", "")
        body.append(f'<tr data-field="{name}"><th>{name}</th><td{marks[0]}><code class="dsha-v">'
                    f'{_cut(str(a), 10 * MAX_CHARS)}</code></td><td{marks[1]}><code class="dsha-v">'
                    f"{_cut(str(b), 10 * MAX_CHARS)}</code></td></tr>")
    verdict = "equal" if cmp.equal else f"differ: {cmp.reason}"
    return _fragment("dsha comparison", cmp.equal, verdict,
                     '<table class="dsha-summary"><thead><tr><th></th><th>left</th><th>right</th></tr></thead>'
                     f'<tbody>{"".join(body)}</tbody></table><p class="dsha-note">{_text(cmp.explain())}</p>')


def changes_html(changes: Any) -> str:
    """``dsha.changed``'s ``Changes``: whether the step must run, and each change (input, what, detail)."""
    items = list(changes)
    if not items:
        return _fragment("dsha changes", True, "unchanged", f'<p class="dsha-note">{_text(changes.explain())}</p>')
    body = "".join(f'<tr data-what="{_text(c.what)}"><td class="dsha-v">{_text(c.input or "—")}</td>'
                   f"<td>{_text(c.what)}</td><td class=\"dsha-v\">{_cut(c.detail, MAX_CHARS)}</td></tr>"
                   for c in items)
    return _fragment("dsha changes", False, f"{len(items):,} change{'s' if len(items) != 1 else ''}: run the step",
                     '<table class="dsha-changes"><thead><tr><th>input</th><th>what</th><th>detail</th></tr></thead>'
                     f"<tbody>{body}</tbody></table>")
