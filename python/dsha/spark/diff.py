"""``dsha.diff``: exactly which rows differ between two DataFrames, without a key (SPEC.md §17).

One Spark job sketches both sides (``dsha_sketch``: row digests in an invertible Bloom lookup table whose cells add,
with each side's digest and column digests) and decodes the difference of the sketches into the row digests in excess
on each side, with their multiplicities. The differing rows are then read by filtering each side with those digests
(a broadcast of the digests, never a join of the two tables), as many times as they are in excess. With a key, rows of
the same key on both sides are paired into per-column changes. Any column name works: the columns the diff adds to
rows while it works are named per call so that none is a column of either table (``diff_names``).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from dsha.core.algorithms import DEFAULT as DEFAULT_ALGORITHM
from dsha.core.diff_html import MAX_CHARS
from dsha.core.diff_html import page as html_page
from dsha.core.diff_html import render as render_html
from dsha.core.diff_report import UNCHANGED, ChangedValue, DiffReport, DiffSummary, RowsShown, repr_text
from dsha.core.diff_report import explain as explain_text
from dsha.core.diff_table import rows_table
from dsha.core.names import name_list
from dsha.core.phases import timed
from dsha.core.sketch_sizes import cells_for, fallback_method, next_size, sketch_method
from dsha.core.sketch_sizes import valid_cells as _valid_cells
from dsha.dependencies import F, pyspark_types
from dsha.errors import DiffError, DshaWarning
from dsha.spark.diff_names import CHANGE_NAMES, WorkingNames, change_names, quoted
from dsha.spark.diff_schema import SchemaDifference, in_layout_of, schema_difference
from dsha.spark.frames import excluding, session_of
from dsha.spark.session import ensure_loaded, session_settings, translate_errors, without_subplan_merging
from dsha.spark.tree import merged, shuffle_for, task_count, use_tree

if TYPE_CHECKING:
    from dsha.spark.types import DataFrameLike

__all__ = ["DEFAULT_CELLS", "DEFAULT_MAX_CELLS", "MAX_CELLS", "REPORT_ROWS", "Diff", "DiffError", "SchemaDifference",
           "cells_for", "diff", "schema_difference"]

# Cells of the first sketch (3·2^14: 2.25 MiB per task, decodes about 35,000 distinct differing rows) and the most a
# retry may use (3·2^18: 36 MiB per task, about 600,000); beyond it the diff falls back to a join of digest counts.
DEFAULT_CELLS = 49152
DEFAULT_MAX_CELLS = 786432
MAX_CELLS = 1 << 24
REPORT_ROWS = 20  # differing rows of each kind a report shows (Diff.to_html, Diff._repr_html_)
STR_ROWS = 10  # differing rows of each kind str(Diff) shows

@dataclass
class Diff:
    """What differs between two DataFrames; truthy exactly when they are equal (as ``dsha.equal`` says).

    ``only_left`` / ``only_right`` hold each differing row as many times as it is in excess on that side (without a
    key: the multisets ``left.exceptAll(right)`` and ``right.exceptAll(left)``); with a key, rows whose key is on both
    sides are in ``changed`` instead, one row per differing column (key columns, ``column``, ``left_value``,
    ``right_value``, values as strings; ``change_names`` holds these three names, which are ``_column``,
    ``_left_value``, ``_right_value`` when a key column has one of them, compared case-insensitively, and so on with
    more ``_``). ``only_right`` has the left's column order and struct field order (SPEC.md §7: fields are identified
    by name). ``columns`` counts, per column, the differing rows that differ in it; without
    a key a column counts the values of the left's excess rows that the right's excess rows do not have, or the
    reverse, whichever is more. With ``column_digests=True``, ``column_digests`` says per column whether the multiset
    of its values is the same on both sides (SPEC.md §17.1), known before any row is read. The differing rows are
    cached (in memory, spilling to disk) until ``unpersist()``; a ``with`` block unpersists them at its end.
    """

    equal: bool
    left_rows: Optional[int]
    right_rows: Optional[int]
    left_digest: Optional[str]
    right_digest: Optional[str]
    only_left_count: int = 0
    only_right_count: int = 0
    changed_count: int = 0
    _columns: Optional[Dict[str, int]] = field(default=None, repr=False)
    column_digests: Dict[str, bool] = field(default_factory=dict)
    key: Optional[List[str]] = None
    change_names: Tuple[str, str, str] = CHANGE_NAMES
    duplicate_keys: int = 0
    method: str = "sketch"
    sketch_cells: int = 0
    cells_used: Optional[int] = None
    distinct_differences: Optional[int] = None
    schema_difference: Optional[SchemaDifference] = None
    _only_left: Optional[DataFrameLike] = field(default=None, repr=False)
    _only_right: Optional[DataFrameLike] = field(default=None, repr=False)
    _common_columns: List[str] = field(default_factory=list, repr=False)
    changed: Optional[DataFrameLike] = None
    _cached: List[DataFrameLike] = field(default_factory=list, repr=False)
    _columns_from: Optional[Callable[[], Dict[str, int]]] = field(default=None, repr=False)
    algorithm: str = DEFAULT_ALGORITHM  # the sketch's row digests and both digests are dsha-v1's (SPEC.md §17)

    def __bool__(self) -> bool:
        return self.equal

    @property
    def only_left(self) -> DataFrameLike:
        """The left's rows in excess (a DataFrame); a :class:`DiffError` when the schemas differ (no rows compare)."""
        return self._rows("only_left", self._only_left)

    @only_left.setter
    def only_left(self, df: DataFrameLike) -> None:
        self._only_left = df

    @property
    def only_right(self) -> DataFrameLike:
        """The right's rows in excess (a DataFrame); a :class:`DiffError` when the schemas differ."""
        return self._rows("only_right", self._only_right)

    @only_right.setter
    def only_right(self, df: DataFrameLike) -> None:
        self._only_right = df

    def _rows(self, name: str, df: Optional[DataFrameLike]) -> DataFrameLike:
        if df is None:  # the schemas differ: no rows were compared
            differences = "; ".join(line.strip() for line in self.explain().splitlines()[1:])
            raise DiffError(f"Diff.{name}: the schemas differ ({differences}), so no rows compare; diff the columns "
                            f"both sides have: dsha.diff(left, right, columns={self._common_columns!r})")
        return df

    def __repr__(self) -> str:
        return repr_text(self.summary(columns=False))  # a few lines, no job run (``columns`` may need one)

    def __str__(self) -> str:
        """``print(d)``: what differs (``explain``) and the first ``STR_ROWS`` differing rows of each kind as an
        aligned table (``core/diff_table``: rows only left and only right paired where few cells differ, the
        differing cells marked). Small jobs over the cached differing rows; the ``repr`` runs none."""
        text = self.explain()
        if self.equal or self.schema_difference:
            return text
        return "\n".join([text, *rows_table(self.report(STR_ROWS))])

    @property
    def columns(self) -> Dict[str, int]:
        """Per column: with a key, how many changed pairs differ in it; without, how many values of one side's excess
        rows the other side's excess rows lack (as multisets; the larger side's count), so a row only on one side
        counts in every column. Counted from the differing rows on first use (a job over those rows only), then
        kept."""
        if self._columns is None and self._columns_from is not None:
            self._columns, self._columns_from = self._columns_from(), None
        return self._columns or {}

    @columns.setter
    def columns(self, value: Dict[str, int]) -> None:
        self._columns, self._columns_from = value, None

    @property
    def differing_columns(self) -> List[str]:
        """Columns that differ: in some differing row (``columns``), or by their column digests."""
        return [c for c in self.column_digests if self.columns.get(c, 0) > 0 or not self.column_digests[c]] or [
            c for c, n in self.columns.items() if n > 0]

    def unpersist(self) -> None:
        for df in self._cached:
            df.unpersist()
        self._cached.clear()

    def __enter__(self) -> Diff:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.unpersist()

    def to_dict(self) -> dict:
        out = {"equal": self.equal, "left_rows": self.left_rows, "right_rows": self.right_rows,
               "left_digest": self.left_digest, "right_digest": self.right_digest,
               "only_left": self.only_left_count, "only_right": self.only_right_count, "changed": self.changed_count,
               "columns": dict(self.columns), "column_digests_equal": dict(self.column_digests), "key": self.key,
               "duplicate_keys": self.duplicate_keys, "method": self.method, "sketch_cells": self.sketch_cells,
               "cells_used": self.cells_used, "distinct_differences": self.distinct_differences}
        if self.schema_difference is not None:
            out["schema"] = self.schema_difference.to_dict()
        return out

    def explain(self) -> str:
        """What differs, for people, in a few lines: the schema difference; or "equal" with the digest and row
        count; or the row counts of each side, the rows only on one side and (with a key) changed, the columns that
        differ (by their differing rows, and by their column digests when computed) and the method used."""
        return explain_text(self.summary())

    def summary(self, columns: bool = True) -> DiffSummary:
        """The numbers of this diff, as both its text (``explain``) and its HTML report show them; ``columns=False``
        leaves the per-column counts out (they may need a job)."""
        return DiffSummary(
            equal=self.equal, algorithm=self.algorithm, method=self.method, left_rows=self.left_rows,
            right_rows=self.right_rows, left_digest=self.left_digest, right_digest=self.right_digest,
            only_left=self.only_left_count, only_right=self.only_right_count, changed=self.changed_count,
            key=tuple(self.key or ()), duplicate_keys=self.duplicate_keys,
            columns=tuple(self.columns.items()) if columns else None,
            column_digests=tuple(self.column_digests.items()),
            schema=self.schema_difference.changes() if self.schema_difference else None)

    def report(self, max_rows: int = REPORT_ROWS, names: Tuple[str, str] = ("left", "right")) -> DiffReport:
        """The summary and the first ``max_rows`` differing rows of each kind, collected: with a key the changed
        pairs (one row a key: its changed columns' left and right values), then the rows only left and only right.
        What ``to_html`` renders. One small job per kind of row that has rows."""
        if isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 0:
            raise ValueError(f"max_rows is a number of rows, 0 or more, not {max_rows!r}")
        summary = self.summary()
        sections: List[RowsShown] = []
        if not self.schema_difference and not self.equal:
            if self.key and self.changed is not None and self.changed_count > 0:
                sections.append(self._changed_pairs(max_rows, [c for c, _ in summary.differing_columns]))
            for kind, df, total in (("only_left", self._only_left, self.only_left_count),
                                    ("only_right", self._only_right, self.only_right_count)):
                if df is None or total <= 0:
                    continue
                fields = df.schema.fields
                rows = df.limit(max_rows).collect() if max_rows else []
                sections.append(RowsShown(kind=kind, columns=tuple(f.name for f in fields),
                                          types=tuple(f.dataType.simpleString() for f in fields),
                                          rows=tuple(tuple(_plain(v) for v in r) for r in rows), total=total))
        return DiffReport(summary=summary, sections=tuple(sections), max_rows=max_rows, names=names)

    def _changed_pairs(self, max_rows: int, columns: List[str]) -> RowsShown:
        """The first ``max_rows`` changed pairs side by side: the key, then per differing column its left and right
        values (as ``changed`` has them: text), or ``UNCHANGED``."""
        assert self.changed is not None and self.key
        key, changed = self.key, self.changed
        column, left_value, right_value = self.change_names
        fields = {f.name: f for f in changed.schema.fields}
        found: Dict[str, Tuple[Tuple[Any, ...], Dict[str, ChangedValue]]] = {}  # by the key's repr: any key type
        if max_rows:
            # the keys first (a few), then all their changed values: whole pairs, never part of one
            keys = changed.select(*map(quoted, key)).distinct().limit(max_rows)
            work = WorkingNames.avoiding(changed.columns, [])
            a, k = work.name("a"), work.name("k")
            match = [F.col(f"{a}.{quoted(c)}").eqNullSafe(F.col(f"{k}.{quoted(c)}")) for c in key]
            values = changed.alias(a).join(keys.alias(k), _and(match), "left_semi")
            for r in values.collect():
                pair = tuple(_plain(r[c]) for c in key)
                found.setdefault(repr(pair), (pair, {}))[1][r[column]] = ChangedValue(r[left_value], r[right_value])
        rows = tuple((*pair, *[cells.get(c, UNCHANGED) for c in columns]) for pair, cells in found.values())
        return RowsShown(kind="changed", columns=(*key, *columns),
                         types=(*[fields[c].dataType.simpleString() for c in key], *["left → right"] * len(columns)),
                         rows=rows, total=self.changed_count)

    def to_html(self, path: Optional[str] = None, max_rows: int = REPORT_ROWS, max_chars: int = MAX_CHARS,
                names: Tuple[str, str] = ("left", "right")) -> str:
        """A report of this diff as one self-contained HTML page (no script, no network): equal or not, the schema
        difference, row counts, the differing rows counted and per column, the first ``max_rows`` differing rows of
        each kind (with a key, changed pairs side by side; with how many more there are), the algorithm and both
        digests. Values longer than ``max_chars``
        characters are cut, visibly; ``names`` are what the two sides are called. Returned, and written to ``path``
        (a local file, UTF-8, replaced if it exists) when one is given."""
        return html_page(self.report(max_rows, names), path, max_chars)

    def _repr_html_(self) -> str:
        """The report in a notebook (Jupyter, and Databricks' ``displayHTML(d._repr_html_())``)."""
        return render_html(self.report(REPORT_ROWS), document=False)


def _plain(v: Any) -> Any:
    """A collected value as plain Python for a report: structs (Rows) as dicts, at any depth."""
    if isinstance(v, pyspark_types.Row):
        return {k: _plain(x) for k, x in v.asDict().items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {(k if _hashable(k) else repr(_plain(k))): _plain(x) for k, x in v.items()}
    return v


def _hashable(v: Any) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True


# What the decoded difference is read as: each side's digests in excess, as one hex string (the digests concatenated),
# the rows in excess on each side (multiplicities added), and the entries themselves only when some digest is in excess
# more than once. 15,000 entries as rows cost ~0.15 s to carry to Python; one string, a few milliseconds.
_DECODED = {
    "left_hex": "array_join(transform(filter(d.entries, e -> e.count > 0), e -> hex(e.digest)), '')",
    "right_hex": "array_join(transform(filter(d.entries, e -> e.count < 0), e -> hex(e.digest)), '')",
    "left_excess": "aggregate(d.entries, 0L, (a, e) -> a + greatest(e.count, 0L))",
    "right_excess": "aggregate(d.entries, 0L, (a, e) -> a + greatest(-e.count, 0L))",
    "distinct": "size(d.entries)",
    "entries": "IF(forall(d.entries, e -> abs(e.count) = 1), NULL, d.entries)",
    # The filter words of each side's digests (SPEC.md §17.4), 8 hex digits each, when they are valid.
    "left_words": "IF(d.filters_valid, array_join(transform(filter(d.entries, e -> e.count > 0), "
                  "e -> lpad(hex(e.filter), 8, '0')), ''), NULL)",
    "right_words": "IF(d.filters_valid, array_join(transform(filter(d.entries, e -> e.count < 0), "
                   "e -> lpad(hex(e.filter), 8, '0')), ''), NULL)",
}


@timed("sketch both sides, decode the difference")
def _sketch_pass(left: Any, right: Any, cells: int, column_digests: bool) -> Dict[str, Any]:
    size = 48 * cells  # a sketch's bytes, near enough (its cells)
    parts = (task_count(left, size), task_count(right, size))
    most = max((p for p in parts if p is not None), default=None)
    spark = left.sparkSession
    with session_settings(spark, {"spark.dsha.sketch.cells": str(cells),
                                  "spark.dsha.sketch.columnDigests": str(column_digests).lower(),
                                  **without_subplan_merging(spark)}), \
            shuffle_for(spark, most, size):
        # Both sketches in one job (a union, not a join that would broadcast one of them), subtracted and decoded.
        # Written as SQL text: three Datasets to analyse instead of eight (~50 ms less on the driver per pass). A side
        # of many partitions is merged as a tree (spark/tree.py: no task receives more than FAN_IN sketches).
        def sketch(df: Any, i: int) -> Any:
            if not use_tree(parts[i], size):
                return df.selectExpr("dsha_sketch(*) AS s", f"{i} AS i")
            return merged(df, "dsha_sketch(*)", "dsha_sketch_merge", parts[i], size).selectExpr("s", f"{i} AS i")

        fields = ["decoded", "cells", "cells_used", "estimate", "left_rows", "right_rows", "left_digest",
                  "right_digest", "columns"]
        row = (sketch(left, 0).unionByName(sketch(right, 1))
               .selectExpr("dsha_sketch_diff(max(IF(i = 0, s, NULL)), max(IF(i = 1, s, NULL))) AS d")
               .selectExpr(*[f"d.{f} AS {f}" for f in fields], *[f"{e} AS {name}" for name, e in _DECODED.items()])
               .first())
    assert row is not None  # a global aggregate has one row
    return row.asDict()  # type: ignore[no-any-return]


@dataclass(frozen=True)
class Passes:
    """What runs a diff's jobs: the jar's SQL functions (``JAR``), or Python on the executors (the jar-free
    ``dsha.jarfree.diff``); the steps between them (retries, the fallback, the checks, the report) are the same.

    ``sketch(left, right, cells, column_digests)``: both sketches subtracted and decoded, as ``_DECODED`` reads it;
    ``in_digests(df, digests, columns, words)``: the rows of ``df`` whose digest is one of ``digests``;
    ``digest(df, work)``: ``df`` with its row digest as the column ``work.digest``;
    ``column_values(rows, columns, work)``: per differing row and column, the side's sign ``s``, the column's name
    ``c`` and the digest ``v`` of its value;
    ``value_digests(df, columns, names)``: ``df`` with the digest of each of ``columns``' values as the column of
    the same place in ``names`` (what pairs by key compare)."""

    sketch: Callable[[Any, Any, int, bool], Dict[str, Any]]
    in_digests: Callable[..., Any]
    digest: Callable[[Any, WorkingNames], Any]
    column_values: Callable[[Any, List[str], WorkingNames], Any]
    value_digests: Callable[[Any, List[str], List[str]], Any]
    needs_jar: bool = True


def _common_columns(left: DataFrameLike, schemas: SchemaDifference) -> List[str]:
    """The left's columns that the right has with the same type (names compared case-insensitively, as Spark does)."""
    differ = {n.lower() for n, _ in schemas.removed} | {n.lower() for n, _, _ in schemas.retyped}
    return [c for c in left.columns if c.lower() not in differ]


def diff(left: DataFrameLike, right: DataFrameLike, key: Union[str, Sequence[str], None] = None,
         columns: Union[str, Sequence[str], None] = None, *,
         column_digests: bool = False, cells: int = DEFAULT_CELLS, max_cells: int = DEFAULT_MAX_CELLS,
         exclude: Union[str, Sequence[str], None] = None) -> Diff:
    """Compares two DataFrames row by row, without a key: which rows are only on one side, how many times, and (with
    ``key=[...]``) which columns changed. Classic and Spark Connect sessions alike.

    ``columns`` restricts the comparison to those columns; ``exclude`` leaves columns out (audit columns such as
    ``_ingested_at``), each dropped from the sides that have it, so the diff is the one of ``left.drop(...)`` and
    ``right.drop(...)``; with ``columns``, the given columns without the excluded ones. An excluded name neither side
    has, or a key column, is a ``ValueError``. ``cells`` sizes the first sketch; when the difference is
    larger, one more pass with a sketch sized from an estimate of the difference is made, up to ``max_cells``; beyond
    that the rows are matched by a join of per-digest counts, which is announced (``DshaWarning``, ``method``).
    ``column_digests=True`` also computes each column's digest in the first pass (``Diff.column_digests``: which
    columns differ, known before any row is read; one more hash per value, about the time of another ``dsha``).
    ``columns`` counts per column from the differing rows, exactly, either way.
    """
    return run_diff(JAR, left, right, key, columns, column_digests, cells, max_cells, exclude)


def run_diff(passes: Passes, left: DataFrameLike, right: DataFrameLike, key: Union[str, Sequence[str], None],
             columns: Union[str, Sequence[str], None], column_digests: bool, cells: int, max_cells: int,
             exclude: Union[str, Sequence[str], None] = None) -> Diff:
    """What every diff does, on the jar or without it (``passes``): the arguments checked, the columns chosen, the
    schemas compared, the right in the left's layout, then the passes."""
    session_of(left, "dsha.diff")  # not a Spark DataFrame: a TypeError naming the right call
    session_of(right, "dsha.diff")  # not a Spark DataFrame: a TypeError naming the right call
    if left.sparkSession is not right.sparkSession:
        raise DiffError("dsha.diff compares DataFrames of one Spark session")
    for name, n in (("cells", cells), ("max_cells", max_cells)):
        if not (isinstance(n, int) and 1 <= n <= MAX_CELLS and _valid_cells(n)):
            raise DiffError(f"{name} must be 2^i or 3·2^i cells (..., 12288, 49152, 65536, ...) up to {MAX_CELLS}, "
                            f"not {n!r}")
    if passes.needs_jar:
        ensure_loaded(left.sparkSession)
    key = [key] if isinstance(key, str) else (list(key) if key else None)
    if columns is not None:
        columns = [columns] if isinstance(columns, str) else list(columns)
        for side, df in (("left", left), ("right", right)):
            missing = [c for c in columns if c not in df.columns]
            if missing:
                raise DiffError(f"no column {', '.join(missing)} on the {side} (columns: {', '.join(df.columns)})")
        if key:
            columns = key + [c for c in columns if c not in key]
    if name_list(exclude, "exclude"):  # the columns (all, or those of columns=) without the excluded ones
        left, right = excluding(exclude, [left, right], ["left", "right"], columns, key or ())
    elif columns is not None:
        left, right = left.select(*map(quoted, columns)), right.select(*map(quoted, columns))
    if key:
        for side, df in (("left", left), ("right", right)):
            missing = [k for k in key if k not in df.columns]
            if missing:
                raise DiffError(f"key column {', '.join(missing)} is not on the {side} (columns: "
                                f"{', '.join(df.columns)})")
    schemas = schema_difference(left, right)
    if schemas:
        return Diff(equal=False, left_rows=None, right_rows=None, left_digest=None, right_digest=None, key=key,
                    change_names=change_names(key or []), method="schema", schema_difference=schemas,
                    _common_columns=_common_columns(left, schemas))
    # The left's column order and struct field order (digests do not depend on them, SPEC.md §7): the rows of both
    # sides can then be compared, united and joined as they are.
    right = in_layout_of(right, left)
    work = WorkingNames.avoiding(left.columns, right.columns)
    with translate_errors():
        return _diff(left, right, key, column_digests, cells, max_cells, work, passes)


def _diff(left: Any, right: Any, key: Optional[List[str]], column_digests: bool, cells: int, max_cells: int,
          work: WorkingNames, jobs: Passes) -> Diff:
    d = jobs.sketch(left, right, cells, column_digests)
    result = Diff(equal=d["left_digest"] == d["right_digest"], left_rows=d["left_rows"], right_rows=d["right_rows"],
                  left_digest=d["left_digest"], right_digest=d["right_digest"], key=key, sketch_cells=d["cells"],
                  change_names=change_names(key or []),
                  column_digests={c["name"]: c["equal"] for c in d["columns"]})
    if result.equal:
        result.columns = {c: 0 for c in left.columns}
        result.cells_used, result.distinct_differences = (d["cells_used"], 0) if d["decoded"] else (None, 0)
        result.only_left, result.only_right = left.limit(0), right.limit(0)
        if key:
            result.changed = _changed_frame(left.limit(0), left.limit(0), key, work, jobs)
        return result
    passes = 1
    while not d["decoded"]:
        estimate, m = int(d["estimate"]), d["cells"]
        size = next_size(estimate, m)  # no zero cell left (SPEC.md §17.4): the estimate is a lower bound
        if size > max_cells:
            break
        passes += 1
        d = jobs.sketch(left, right, size, False)
    if d["decoded"]:
        result.method = sketch_method(passes)
        result.sketch_cells, result.cells_used, result.distinct_differences = d["cells"], d["cells_used"], d["distinct"]
        expected = (int(d["left_excess"]), int(d["right_excess"]))
        # The differing rows are few (at most about max_cells): their jobs shuffle into a handful of partitions, not
        # spark.sql.shuffle.partitions (which, at its default 200, would be most of their time).
        partitions = max(1, min(64, sum(expected) // 20000 + 1))
        with session_settings(left.sparkSession, {"spark.sql.shuffle.partitions": str(partitions)}):
            rows, got = _fetch(result, left, right, d, expected, partitions, work, jobs)
            if got == expected:
                return _report(result, rows, left.columns, got, partitions, key, work, jobs)
    else:
        result.method = fallback_method(int(d["estimate"]), max_cells)
        warnings.warn(f"dsha.diff: {result.method}; this reads and shuffles both tables", DshaWarning, stacklevel=3)
        rows = _cached(result, _differing_rows(left, right, _digest_counts(left, right, work, jobs), work, jobs))
        return _report(result, rows, left.columns, _side_counts(rows, work), 0, key, work, jobs)
    result.unpersist()
    raise RuntimeError(
        f"dsha.diff: the sketch decoded {expected[0]} rows only on the left and {expected[1]} only on the right, but "
        f"filtering the tables by their digests found {got[0]} and {got[1]}: is an input non-deterministic (re-read "
        "files that changed, rand(), a limit without an order)? Nothing is reported rather than a wrong result.")


def _report(result: Diff, rows: Any, names: List[str], got: Tuple[int, int], partitions: int,
            key: Optional[List[str]], work: WorkingNames, passes: Passes) -> Diff:
    """The result from the differing rows (cached, tagged by side): each side's, and with a key, the pairs.
    ``partitions``: the shuffle partitions of jobs over those rows (0: the session's)."""
    data = [quoted(c) for c in names]
    only_left = rows.filter(F.col(work.side) == "left").select(*data)
    only_right = rows.filter(F.col(work.side) == "right").select(*data)
    if not key:
        result.only_left, result.only_right = only_left, only_right
        result.only_left_count, result.only_right_count = got
        spark = rows.sparkSession

        def column_counts() -> Dict[str, int]:
            small = {"spark.sql.shuffle.partitions": str(partitions)} if partitions else {}
            with session_settings(spark, small):
                return _column_counts(rows, names, work, passes)

        result._columns_from = column_counts
        return result
    _pair_by_key(result, only_left, only_right, key, work, passes)
    return result


def _digest(df: Any, work: WorkingNames) -> Any:
    """``df`` with its row digest (the same as in its sketch: the same columns, by name)."""
    return df.withColumn(work.digest, F.call_function("logical_hash", *[F.col(quoted(c)) for c in df.columns]))


def _digest_counts(left: Any, right: Any, work: WorkingNames, passes: Passes) -> Any:
    """Fallback: the signed excess of every row digest, from a full outer join of per-digest counts."""
    counted = lambda df, sign: (passes.digest(df, work).groupBy(work.digest)
                                .agg((F.count(F.lit(1)) * sign).alias(work.count)))
    both = counted(left, 1).unionByName(counted(right, -1))
    return both.groupBy(work.digest).agg(F.sum(work.count).alias(work.count)).filter(F.col(work.count) != 0)


def _cached(result: Diff, rows: Any) -> Any:
    """``rows`` persisted until ``result.unpersist()``."""
    rows = rows.persist()
    result._cached.append(rows)
    return rows


def _fetch(result: Diff, left: Any, right: Any, d: Dict[str, Any], expected: Tuple[int, int],
           partitions: int, work: WorkingNames, passes: Passes) -> Tuple[Any, Tuple[int, int]]:
    """The differing rows named by the decoded digests (cached), and the rows found on each side."""
    digests = bytes.fromhex(d["left_hex"]), bytes.fromhex(d["right_hex"])
    words = _words(d["left_words"]), _words(d["right_words"])
    columns = [F.col(quoted(c)) for c in left.columns]  # by name: the same for both sides
    if d["entries"] is None:
        # Each digest in excess once: if each side holds each of its digests once, the filtered rows are the answer
        # as they are (no deduplication, no join). The counts tell; otherwise the general way below.
        rows = _filtered_rows(left, right, digests, words, columns, work, passes)
        if partitions == 1:
            # Few rows: in one hash partition, which Spark then counts or aggregates in one stage, not two jobs.
            rows = rows.repartition(1, work.side)
        rows = _cached(result, rows)
        got = _side_counts(rows, work)
        if got == expected:
            return rows, got
        result.unpersist()
        entries = [(b[i:i + 16], sign) for b, sign in zip(digests, (1, -1)) for i in range(0, len(b), 16)]
    else:
        entries = [(bytes(e["digest"]), int(e["count"])) for e in d["entries"]]
    counts = left.sparkSession.createDataFrame(entries, f"{work.digest} binary, {work.count} bigint")
    rows = _cached(result, _differing_rows(left, right, counts, work, passes, digests=digests, words=words,
                                           partitions=partitions))
    return rows, _side_counts(rows, work)


def _words(text: Optional[str]) -> Optional[bytes]:
    """Filter words given as 8 hex digits each (big-endian, as ``hex`` prints a number) as 4-byte little-endian words;
    None when the decoded difference has no valid filter words."""
    if text is None:
        return None
    return b"".join(int(text[i:i + 8], 16).to_bytes(4, "little") for i in range(0, len(text), 8))


def _in_digests(df: Any, digests: bytes, columns: List[Any], words: Optional[bytes] = None) -> Any:
    """The rows of ``df`` (whose columns are ``columns``) whose row digest is one of ``digests`` (concatenated). With
    the filter words of those digests' rows, only the rows whose filter word is one of them are hashed."""
    in_digests = F.call_function("logical_hash_in", F.lit(bytearray(digests)), *columns)
    if words is None:
        return df.filter(in_digests)
    return df.filter(F.call_function("logical_filter_word_in", F.lit(bytearray(words)), *columns) & in_digests)


def _filtered_rows(left: Any, right: Any, digests: Tuple[bytes, bytes], words: Tuple[Optional[bytes], ...],
                   columns: List[Any], work: WorkingNames, passes: Passes) -> Any:
    """The rows of each side whose digest is in excess there, as often as the side holds them, tagged by side."""
    kept = lambda df, i: passes.in_digests(df, digests[i], columns, words[i])
    return (kept(left, 0).withColumn(work.side, F.lit("left"))
            .unionByName(kept(right, 1).withColumn(work.side, F.lit("right"))))


def _differing_rows(left: Any, right: Any, counts: Any, work: WorkingNames, passes: Passes,
                    digests: Optional[Tuple[bytes, bytes]] = None,
                    words: Tuple[Optional[bytes], ...] = (None, None), partitions: int = 0) -> Any:
    """The rows of each side whose digest is in excess there, each as many times as its excess, tagged by side.
    ``digests``: the digests in excess on each side (concatenated), when known: each side is then first filtered by
    ``logical_hash_in`` of its digests (no digest made a value, no join of the whole table), else joined with
    ``counts``; ``words``: their rows' filter words on each side, when valid (fewer rows hashed). ``partitions``: how
    many partitions the (few) matched rows are deduplicated in (0: Spark's default)."""
    def side(df: Any, name: str, sign: int) -> Any:
        wanted = counts.filter(F.col(work.count) * sign > 0).select(work.digest,
                                                                     (F.col(work.count) * sign).alias(work.count))
        if digests is not None:
            mine, filter_words = (digests[0], words[0]) if sign > 0 else (digests[1], words[1])
            df = passes.in_digests(df, mine, [F.col(quoted(c)) for c in df.columns], filter_words)
            wanted = F.broadcast(wanted)
        joined = passes.digest(df, work).join(wanted, work.digest)
        if partitions:  # hash-partitioned by digest, which the deduplication then needs no other shuffle for
            joined = joined.repartition(partitions, work.digest)
        one = joined.dropDuplicates([work.digest])  # rows of one digest are canonically equal: keep one, then repeat it
        return (one.withColumn(work.copy, F.explode(F.sequence(F.lit(1), F.col(work.count))))
                .drop(work.copy, work.count, work.digest).withColumn(work.side, F.lit(name)))

    return side(left, "left", 1).unionByName(side(right, "right", -1))


@timed("read the differing rows")
def _side_counts(rows: Any, work: WorkingNames) -> Tuple[int, int]:
    """How many of the differing rows are on each side (the job that fills their cache)."""
    # One global aggregate: two jobs under adaptive execution, where a groupBy's exchange made three.
    found = rows.selectExpr(f"count_if({work.side} = 'left') AS l", f"count_if({work.side} = 'right') AS r").first()
    return int(found["l"]), int(found["r"])


def _column_values(rows: Any, columns: List[str], work: WorkingNames) -> Any:
    """Per differing row and column: the side's sign ``s``, the column ``c``, its value's digest ``v`` (the jar's)."""
    values = F.explode(F.array(*[
        F.struct(F.lit(c).alias("c"), F.call_function("logical_hash", F.col(quoted(c))).alias("v"))
        for c in columns]))
    sign = F.when(F.col(work.side) == "left", 1).otherwise(-1)
    return rows.select(sign.alias("s"), values.alias("cv")).select("s", "cv.c", "cv.v")


def _column_counts(rows: Any, columns: List[str], work: WorkingNames, passes: Passes) -> Dict[str, int]:
    """Per column, among the differing rows: the values of one side's excess that the other's lacks (as multisets,
    by canonical value), the larger side's count. A changed value counts 1; a row only on one side counts 1 in every
    column."""
    per_value = passes.column_values(rows, columns, work).groupBy("c", "v").agg(F.sum("s").alias("n"))
    per_column = per_value.groupBy("c").agg(
        F.sum(F.greatest(F.col("n"), F.lit(0))).alias("l"), F.sum(F.greatest(-F.col("n"), F.lit(0))).alias("r"))
    found = {r["c"]: max(int(r["l"]), int(r["r"])) for r in per_column.collect()}
    return {c: found.get(c, 0) for c in columns}


def _value_text(col: Any, dtype: Any) -> Any:
    return F.hex(col) if isinstance(dtype, pyspark_types.BinaryType) else col.cast("string")


def _value_digests(df: Any, columns: List[str], names: List[str]) -> Any:
    """``df`` with the digest of each of ``columns``' values (the jar's ``logical_hash``) as the column ``names[i]``."""
    return df.select("*", *[F.call_function("logical_hash", F.col(quoted(c))).alias(n) for c, n in zip(columns, names)])


def _changed_frame(paired_left: Any, paired_right: Any, key: List[str], work: WorkingNames, passes: Passes) -> Any:
    """One row per differing column of each pair: key columns, then ``change_names(key)`` (column, left_value,
    right_value: values as strings); a value differs when its digest does (``passes.value_digests``)."""
    column, left_value, right_value = change_names(key)
    value_columns = [f for f in paired_left.schema.fields if f.name not in key]
    digests = [work.name(f"v{i}") for i in range(len(value_columns))]
    if value_columns:
        paired_left, paired_right = (passes.value_digests(df, [f.name for f in value_columns], digests)
                                     for df in (paired_left, paired_right))
    left_alias, right_alias, cell = work.name("l"), work.name("r"), work.name("cell")
    l_col = lambda name: F.col(f"{left_alias}.{quoted(name)}")
    r_col = lambda name: F.col(f"{right_alias}.{quoted(name)}")
    pairs = paired_left.alias(left_alias).join(paired_right.alias(right_alias),
                                               _and([l_col(k).eqNullSafe(r_col(k)) for k in key]))
    keys = [l_col(k).alias(k) for k in key]
    if not value_columns:
        return pairs.select(*keys, *[F.lit(None).cast("string").alias(n) for n in (column, left_value, right_value)]
                            ).limit(0)
    cells = F.explode(F.array(*[
        F.struct(F.lit(f.name).alias("column"), _value_text(l_col(f.name), f.dataType).alias("left_value"),
                 _value_text(r_col(f.name), f.dataType).alias("right_value"),
                 (l_col(d) != r_col(d)).alias("differs"))
        for f, d in zip(value_columns, digests)]))
    return (pairs.select(*keys, cells.alias(cell))
            .filter(F.col(f"{cell}.differs"))
            .select(*map(quoted, key), F.col(f"{cell}.column").alias(column),
                    F.col(f"{cell}.left_value").alias(left_value), F.col(f"{cell}.right_value").alias(right_value)))


def _and(terms: List[Any]) -> Any:
    out = terms[0]
    for t in terms[1:]:
        out = out & t
    return out


@timed("pair the rows by key")
def _pair_by_key(result: Diff, only_left: Any, only_right: Any, key: List[str], work: WorkingNames,
                 passes: Passes) -> None:
    """Pairs the differing rows whose key is once on each side into ``changed``; keys on several differing rows of a
    side (and on the other side too) are counted in ``duplicate_keys`` and left unpaired."""
    in_left, in_right, n_left, n_right = work.name("in_l"), work.name("in_r"), work.name("nl"), work.name("nr")
    keys = list(map(quoted, key))
    tagged = (only_left.select(*keys, F.lit(1).alias(in_left), F.lit(0).alias(in_right))
              .unionByName(only_right.select(*keys, F.lit(0).alias(in_left), F.lit(1).alias(in_right))))
    per_key = tagged.groupBy(*keys).agg(F.sum(in_left).alias(n_left), F.sum(in_right).alias(n_right))
    nl, nr = F.col(n_left), F.col(n_right)
    # One job for every count: a paired key is on one row of each side, so each side's unpaired rows are its
    # differing rows less the pairs (no count of the semi- and anti-joins below, two jobs more each).
    stats = per_key.agg(
        F.sum(F.when((nl == 1) & (nr == 1), 1).otherwise(0)).alias("paired"),
        F.sum(F.when((nl >= 1) & (nr >= 1) & ((nl > 1) | (nr > 1)), 1).otherwise(0)).alias("ambiguous"),
        F.sum(nl).alias("left_rows"), F.sum(nr).alias("right_rows")).first()
    paired_keys = per_key.filter((nl == 1) & (nr == 1)).select(*keys)
    rows_alias, keys_alias = work.name("a"), work.name("k")

    def split(df: Any) -> Tuple[Any, Any]:
        a, k = df.alias(rows_alias), paired_keys.alias(keys_alias)
        match = _and([F.col(f"{rows_alias}.{quoted(c)}").eqNullSafe(F.col(f"{keys_alias}.{quoted(c)}")) for c in key])
        mine = [F.col(f"{rows_alias}.{quoted(c)}") for c in df.columns]
        return a.join(k, match, "left_semi").select(*mine), a.join(k, match, "left_anti").select(*mine)

    paired_left, unpaired_left = split(only_left)
    paired_right, unpaired_right = split(only_right)
    result.changed_count = int(stats["paired"] or 0)
    result.duplicate_keys = int(stats["ambiguous"] or 0)
    result.only_left, result.only_right = unpaired_left, unpaired_right
    result.only_left_count = int(stats["left_rows"] or 0) - result.changed_count
    result.only_right_count = int(stats["right_rows"] or 0) - result.changed_count
    result.changed = _changed_frame(paired_left, paired_right, key, work, passes)
    changed, column = result.changed, result.change_names[0]

    def column_counts() -> Dict[str, int]:  # on first use, as without a key (a job over the pairs)
        per_column = {r[0]: int(r[1]) for r in changed.groupBy(quoted(column)).count().collect()}
        return {c: per_column.get(c, 0) for c in only_left.columns if c not in key}

    result._columns_from = column_counts


JAR = Passes(sketch=_sketch_pass, in_digests=_in_digests, digest=_digest, column_values=_column_values,
             value_digests=_value_digests)
