"""Which rows differ between two Arrow inputs (files, tables), without a key and without Spark: ``dsha diff`` on the
Arrow engine.

The passes of ``dsha.diff`` (SPEC.md §17), in this process: both inputs sketched as the jar sketches them
(:mod:`dsha.arrow.sketch`), the difference decoded at its smallest fold (:mod:`dsha.core.sketch`); a larger sketch
when it does not decode, up to ``max_cells``, beyond that every row digest counted; then each input read once more,
keeping the rows whose filter word and digest are decoded ones, each as many times as it is in excess. Memory: a
sketch per side and the differing rows (the fallback: 16 bytes per row of each input).
"""
from __future__ import annotations

import warnings
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np
import pyarrow as pa

import dsha.arrow
from dsha.arrow._sources import input_names, to_batches
from dsha.arrow._types import canonical_type, schema_string
from dsha.arrow.sketch import build, digests_and_words, rows_in
from dsha.core.algorithms import DEFAULT as ALGORITHM
from dsha.core.diff_html import MAX_CHARS, page, render
from dsha.core.diff_report import DiffReport, DiffSummary, RowsShown, SchemaChanges, explain, repr_text
from dsha.core.diff_table import rows_table
from dsha.core.names import name_list, without_excluded
from dsha.core.phases import step, timed
from dsha.core.sketch import Decoded, Difference, Sketch, decode_smallest
from dsha.core.sketch_sizes import fallback_method, next_size, sketch_method
from dsha.errors import DiffError, DshaWarning

__all__ = ["ArrowDiff", "diff"]

DEFAULT_CELLS = 49152  # as dsha.diff
DEFAULT_MAX_CELLS = 786432
REPORT_ROWS = 20  # as dsha.diff's Diff: differing rows of each kind a report shows
STR_ROWS = 10  # and str() shows


@dataclass
class ArrowDiff:
    """What differs between two Arrow inputs: the fields of ``dsha.diff``'s ``Diff`` (without a key), the differing
    rows as Arrow tables (``only_left``, ``only_right``: each row as many times as it is in excess, in the left's
    column order)."""

    equal: bool
    left_rows: Optional[int]
    right_rows: Optional[int]
    left_digest: Optional[str]
    right_digest: Optional[str]
    only_left: Optional[pa.Table] = None
    only_right: Optional[pa.Table] = None
    method: str = "sketch"
    sketch_cells: int = 0
    cells_used: Optional[int] = None
    distinct_differences: Optional[int] = None
    column_digests: Dict[str, bool] = field(default_factory=dict)
    schema_difference: Optional[SchemaChanges] = None
    algorithm: str = ALGORITHM
    _columns: Optional[Dict[str, int]] = field(default=None, repr=False)

    key = None  # no key on the Arrow engine: rows only on each side
    changed = None
    changed_count = 0
    duplicate_keys = 0

    def __bool__(self) -> bool:
        return self.equal

    def __repr__(self) -> str:
        """As ``Diff``'s: a few lines (digests, row counts, what differs), the schema difference when there is one."""
        return "Arrow" + repr_text(self.summary())

    def __str__(self) -> str:
        """``print(d)``: ``explain`` and the first differing rows of each kind as an aligned table, as ``Diff``'s."""
        text = self.explain()
        if self.equal or self.schema_difference:
            return text
        return "\n".join([text, *rows_table(self.report(STR_ROWS))])

    def __enter__(self) -> ArrowDiff:  # as ``with dsha.diff(...) as d:`` on Spark; nothing is cached here
        return self

    def __exit__(self, *exc: Any) -> None:
        pass

    def unpersist(self) -> None:
        """Nothing to release (the differing rows are Arrow tables in memory); there for code written for ``Diff``."""

    @property
    def differing_columns(self) -> List[str]:
        """Columns that differ: in some differing row (``columns``), or by their column digests (as ``Diff``'s)."""
        return [c for c in self.column_digests if self.columns.get(c, 0) > 0 or not self.column_digests[c]] or [
            c for c, n in self.columns.items() if n > 0]

    def to_html(self, path: Optional[str] = None, max_rows: int = REPORT_ROWS, max_chars: int = MAX_CHARS,
                names: Tuple[str, str] = ("left", "right")) -> str:
        """The report as one self-contained HTML page, as ``Diff.to_html`` (written to ``path`` when given)."""
        return page(self.report(max_rows, names), path, max_chars)

    def _repr_html_(self) -> str:
        return render(self.report(REPORT_ROWS), document=False)

    def explain(self) -> str:
        """What differs, in a few lines: the text of ``Diff.explain``."""
        return explain(self.summary())

    @property
    def only_left_count(self) -> int:
        return 0 if self.only_left is None else self.only_left.num_rows

    @property
    def only_right_count(self) -> int:
        return 0 if self.only_right is None else self.only_right.num_rows

    @property
    def columns(self) -> Dict[str, int]:
        """Per column, how many differing rows differ in it (as ``Diff.columns``: the values of one side's excess rows
        that the other side's lack, by canonical value, the larger side's count)."""
        if self.only_left is None or self.only_right is None:
            return {}
        if self._columns is not None:
            return self._columns
        out = {}
        for c in self.only_left.column_names:
            left, right = (Counter(bytes(h) for h in dsha.arrow.logical_hash(t.select([c])).to_pylist())
                           for t in (self.only_left, self.only_right))
            out[c] = max(sum((left - right).values()), sum((right - left).values()))
        self._columns = out
        return out

    def summary(self) -> DiffSummary:
        return DiffSummary(
            equal=self.equal, algorithm=self.algorithm, method=self.method, left_rows=self.left_rows,
            right_rows=self.right_rows, left_digest=self.left_digest, right_digest=self.right_digest,
            only_left=self.only_left_count, only_right=self.only_right_count, changed=0, key=(), duplicate_keys=0,
            columns=tuple(self.columns.items()), column_digests=tuple(self.column_digests.items()),
            schema=self.schema_difference)

    def report(self, max_rows: int = REPORT_ROWS, names: Tuple[str, str] = ("left", "right")) -> DiffReport:
        """The summary and the first ``max_rows`` differing rows of each kind (what ``Diff.report`` holds)."""
        sections = []
        for kind, table in (("only_left", self.only_left), ("only_right", self.only_right)):
            if table is None or table.num_rows == 0:
                continue
            rows = table.slice(0, max_rows).to_pylist() if max_rows else []
            sections.append(RowsShown(kind=kind, columns=tuple(table.column_names),
                                      types=tuple(canonical_type(f.type, f.name) for f in table.schema),
                                      rows=tuple(tuple(r.values()) for r in rows), total=table.num_rows))
        return DiffReport(summary=self.summary(), sections=tuple(sections), max_rows=max_rows, names=names)

    def to_dict(self) -> Dict[str, Any]:
        """The fields ``Diff.to_dict`` gives."""
        out: Dict[str, Any] = {
            "equal": self.equal, "left_rows": self.left_rows, "right_rows": self.right_rows,
            "left_digest": self.left_digest, "right_digest": self.right_digest, "only_left": self.only_left_count,
            "only_right": self.only_right_count, "changed": 0, "columns": self.columns,
            "column_digests_equal": dict(self.column_digests), "key": None, "duplicate_keys": 0,
            "method": self.method, "sketch_cells": self.sketch_cells, "cells_used": self.cells_used,
            "distinct_differences": self.distinct_differences}
        if self.schema_difference is not None:
            s = self.schema_difference
            out["schema"] = {"added": [list(a) for a in s.added], "removed": [list(r) for r in s.removed],
                             "retyped": [list(r) for r in s.retyped]}
        return out


class _Input:
    """One side: what to read, its columns (in the left's order), its Arrow schema."""

    def __init__(self, obj: Any, columns: Optional[Sequence[str]], options: Dict[str, Any]):
        self.obj, self.options = obj, options
        self.schema, batches = to_batches(obj, columns, **options)
        del batches
        self.columns = list(self.schema.names)

    def batches(self) -> Iterable[pa.RecordBatch]:
        return to_batches(self.obj, self.columns, **self.options)[1]


def _types(schema: pa.Schema) -> Dict[str, Tuple[str, str]]:
    return {f.name.lower(): (f.name, canonical_type(f.type, f.name)) for f in schema}


def _schema_changes(left: pa.Schema, right: pa.Schema) -> SchemaChanges:
    a, b = _types(left), _types(right)
    return SchemaChanges(added=tuple(b[k] for k in b if k not in a), removed=tuple(a[k] for k in a if k not in b),
                         retyped=tuple((a[k][0], a[k][1], b[k][1]) for k in a if k in b and a[k][1] != b[k][1]))


def _counted(side: _Input) -> Counter[bytes]:
    """Every row digest of a side, counted (the fallback)."""
    counts: Counter[bytes] = Counter()
    for batch in side.batches():
        if batch.num_rows:
            found, _ = digests_and_words(batch)
            counts.update(found.view("V16").reshape(-1).tolist())
    return counts


def _rows(side: _Input, wanted: Dict[bytes, int], words: Optional[np.ndarray]) -> Tuple[pa.Table, int]:
    """The side's rows of the ``wanted`` digests, each as many times as wanted, and how many digests were found."""
    first: Dict[bytes, int] = {}
    kept: List[pa.RecordBatch] = []
    at = 0
    for batch in side.batches():
        rows, digests = rows_in(batch, set(wanted), words)
        for i, d in enumerate(digests):
            first.setdefault(d, at + i)
        if rows.num_rows:
            kept.append(rows)
            at += rows.num_rows
    table = pa.Table.from_batches(kept, schema=side.schema) if kept else side.schema.empty_table()
    order = [first[d] for d in sorted(wanted) if d in first for _ in range(wanted[d])]
    return table.take(pa.array(order, pa.int64())), len(first)


def diff(left: Any, right: Any, columns: Optional[Sequence[str]] = None, *, column_digests: bool = False,
         cells: int = DEFAULT_CELLS, max_cells: int = DEFAULT_MAX_CELLS, left_options: Optional[Dict[str, Any]] = None,
         right_options: Optional[Dict[str, Any]] = None, exclude: Optional[Sequence[str]] = None) -> ArrowDiff:
    """Compares two Arrow inputs (anything :func:`dsha.arrow.fingerprint` reads) row by row, without a key.
    ``left_options`` / ``right_options``: the reader options of each side (``format``, ``partitioning``, ...).
    ``exclude``: columns left out, each dropped from the sides that have it, as ``dsha.diff(..., exclude=...)``
    leaves them out (a name neither side has is a ``ValueError`` with the closest names)."""
    options = dict(left_options or {}), dict(right_options or {})
    chosen = [columns, columns]
    if name_list(exclude, "exclude"):
        names = [input_names(x, o.get("format"), o.get("partitioning")) for x, o in zip((left, right), options)]
        chosen = without_excluded(exclude, [("left", names[0]), ("right", names[1])],  # type: ignore[assignment]
                                  [columns] if isinstance(columns, str) else columns)
    a, b = _Input(left, chosen[0], options[0]), _Input(right, chosen[1], options[1])
    if schema_string(a.schema) != schema_string(b.schema):
        return ArrowDiff(False, None, None, None, None, method="schema",
                         schema_difference=_schema_changes(a.schema, b.schema))
    by_lower = {c.lower(): c for c in b.columns}
    b = _Input(right, [c if c in b.columns else by_lower[c.lower()] for c in a.columns], b.options)  # left's order
    la, lb, difference, decoded = _sketch_pass(a, b, cells, column_digests)
    out = ArrowDiff(la.digest == lb.digest, la.rows, lb.rows, la.digest, lb.digest,
                    column_digests={c.name: la.column_digest(c) == dict((d.name, lb.column_digest(d))
                                                                        for d in lb.columns).get(c.name)
                                    for c in la.columns})
    out.sketch_cells = difference.cells
    if out.equal:
        out.only_left, out.only_right = a.schema.empty_table(), b.schema.empty_table().rename_columns(a.columns)
        out.cells_used, out.distinct_differences = (decoded.cells if decoded.success else None), 0
        return out
    passes = 1
    while not decoded.success:
        size = next_size(int(decoded.estimate or 1), difference.cells)
        if size > max_cells:
            break
        passes += 1
        la, lb, difference, decoded = _sketch_pass(a, b, size, False)
    if decoded.success:
        out.method = sketch_method(passes)
        out.sketch_cells, out.cells_used, out.distinct_differences = difference.cells, decoded.cells, len(
            decoded.entries)
        _fetch(out, a, b, decoded)
        return out
    out.method = fallback_method(int(decoded.estimate or 0), max_cells)
    warnings.warn(f"dsha diff: {out.method}; every row digest of both inputs is counted", DshaWarning, stacklevel=2)
    with step("count every row digest of both inputs"):
        counts = _counted(a)
        counts.subtract(_counted(b))
    entries: Dict[bytes, Tuple[int, Optional[int]]] = {bytes(d): (n, None) for d, n in counts.items() if n}
    _fetch(out, a, b, Decoded(True, 0, entries, False))
    return out


@timed("sketch both sides, decode the difference")
def _sketch_pass(a: _Input, b: _Input, cells: int, column_digests: bool) -> Tuple[Sketch, Sketch, Difference, Decoded]:
    """One pass (a phase line, as ``dsha.diff``'s on Spark): both sides sketched with ``cells`` cells, their
    difference and what of it decodes."""
    la = build(a.schema, a.batches(), cells, column_digests)
    lb = build(b.schema, b.batches(), cells, column_digests)
    difference = la.minus(lb)
    return la, lb, difference, decode_smallest(difference)


@timed("read the differing rows")
def _fetch(out: ArrowDiff, a: _Input, b: _Input, decoded: Decoded) -> None:
    """The differing rows of each side (checked against the decoded counts)."""
    found = []
    for side, sign in ((a, 1), (b, -1)):
        wanted = {d: n * sign for d, (n, _) in decoded.entries.items() if n * sign > 0}
        words = (np.array([phi for d, (_, phi) in decoded.entries.items() if d in wanted], dtype=np.uint64)
                 if decoded.filters_valid else None)
        table, seen = _rows(side, wanted, words)
        if seen != len(wanted):
            raise DiffError(f"dsha diff: the sketch decoded {len(wanted)} distinct rows in excess on the "
                            f"{'left' if sign > 0 else 'right'}, but reading the input again found {seen} of them: "
                            "did an input change while it was read? Nothing is reported rather than a wrong result.")
        found.append(table.rename_columns(a.columns))
    out.only_left, out.only_right = found
