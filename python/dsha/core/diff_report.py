"""What a report of ``dsha.diff`` says, computed once and rendered twice: as text here (``Diff.explain``, the
``repr``) and as HTML (``dsha.core.diff_html``: ``Diff.to_html``, ``Diff._repr_html_``, ``dsha diff --html``).

Backend-free: the Spark side (``dsha.spark.diff.Diff.summary`` / ``.report``) fills these values from a ``Diff``,
its rows already collected as plain Python values (structs as dicts, binary as bytes).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

__all__ = ["UNCHANGED", "ChangedValue", "DiffReport", "DiffSummary", "RowsShown", "SchemaChanges", "explain",
           "repr_text", "schema_lines"]


def schema_lines(added: Sequence[Tuple[str, str]], removed: Sequence[Tuple[str, str]],
                 retyped: Sequence[Tuple[str, str, str]]) -> List[str]:
    """The schema difference, one line a column: ``added:   name type``, ``removed: ...``, ``retyped: name a -> b``."""
    lines = [f"  added:   {n} {t}" for n, t in added]
    lines += [f"  removed: {n} {t}" for n, t in removed]
    lines += [f"  retyped: {n} {a} -> {b}" for n, a, b in retyped]
    return lines


@dataclass(frozen=True)
class SchemaChanges:
    """Columns only on the right (added), only on the left (removed), and of another type (retyped, left -> right)."""

    added: Tuple[Tuple[str, str], ...]
    removed: Tuple[Tuple[str, str], ...]
    retyped: Tuple[Tuple[str, str, str], ...]

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.retyped)

    def explain(self) -> str:
        return "schemas differ:\n" + "\n".join(schema_lines(self.added, self.removed, self.retyped))


@dataclass(frozen=True)
class DiffSummary:
    """The numbers of a diff, without its rows. ``columns``: per column (table order) how many differing rows differ
    in it, or None when not computed (the ``repr`` runs no job); ``column_digests``: per column whether its column
    digests are equal (empty unless asked for)."""

    equal: bool
    algorithm: str
    method: str
    left_rows: Optional[int]
    right_rows: Optional[int]
    left_digest: Optional[str]
    right_digest: Optional[str]
    only_left: int
    only_right: int
    changed: int
    key: Tuple[str, ...]
    duplicate_keys: int
    columns: Optional[Tuple[Tuple[str, int], ...]]
    column_digests: Tuple[Tuple[str, bool], ...]
    schema: Optional[SchemaChanges]

    @property
    def differing_columns(self) -> List[Tuple[str, int]]:
        """The columns some differing row differs in, with their counts."""
        return [(c, n) for c, n in self.columns or () if n]

    @property
    def digest_differs(self) -> List[str]:
        """The columns whose column digests differ."""
        return [c for c, same in self.column_digests if not same]


@dataclass(frozen=True)
class ChangedValue:
    """A column's value on each side of a changed pair (as text, as ``Diff.changed`` holds them)."""

    left: Optional[str]
    right: Optional[str]


class _Unchanged:
    def __repr__(self) -> str:
        return "UNCHANGED"


UNCHANGED: Any = _Unchanged()  # a column a changed pair does not differ in


@dataclass(frozen=True)
class RowsShown:
    """The first rows of one kind of differing row: ``kind`` is ``only_left``, ``only_right`` or ``changed`` (one
    row per pair of rows of one key: the key columns, then per differing column a ``ChangedValue`` or
    ``UNCHANGED``); ``total`` how many there are."""

    kind: str
    columns: Tuple[str, ...]
    types: Tuple[str, ...]
    rows: Tuple[Tuple[Any, ...], ...]
    total: int

    @property
    def more(self) -> int:
        """How many rows are not shown."""
        return max(0, self.total - len(self.rows))


@dataclass(frozen=True)
class DiffReport:
    """A summary and up to ``max_rows`` rows of each kind; ``names``: what the two sides are called."""

    summary: DiffSummary
    sections: Tuple[RowsShown, ...]
    max_rows: int
    names: Tuple[str, str] = ("left", "right")


def explain(s: DiffSummary) -> str:
    """What differs, for people, in a few lines: the schema difference; or "equal" with the digest and row count; or
    the row counts of each side, the rows only on one side and (with a key) changed, the columns that differ (by their
    differing rows, and by their column digests when computed) and the method used."""
    if s.schema:
        return s.schema.explain()
    if s.equal:
        return f"equal: {s.left_digest} ({s.left_rows} rows)"
    parts = [f"{s.left_rows} rows left, {s.right_rows} right: {s.only_left} only left, {s.only_right} only right"]
    if s.key:
        parts[0] += f", {s.changed} changed (key {', '.join(s.key)})"
        if s.duplicate_keys:
            parts.append(f"{s.duplicate_keys} keys are on several differing rows of a side: not paired")
    if s.differing_columns:
        parts.append("columns: " + ", ".join(f"{c} {n}" for c, n in s.differing_columns))
    if s.digest_differs:
        parts.append("column digests differ: " + ", ".join(s.digest_differs))
    parts.append(f"method: {s.method}")
    return "\n".join(parts)


def repr_text(s: DiffSummary) -> str:
    """``Diff(...)`` in a few lines (no per-column counts: the ``repr`` runs no job)."""
    lines = [f"Diff(equal={s.equal}, method={s.method!r},"]
    if s.schema:
        lines += ["    " + line.strip() + "," for line in schema_lines(s.schema.added, s.schema.removed,
                                                                       s.schema.retyped)]
    else:
        lines += [f"    left=(digest={s.left_digest!r}, rows={s.left_rows}),",
                  f"    right=(digest={s.right_digest!r}, rows={s.right_rows}),",
                  f"    only_left={s.only_left}, only_right={s.only_right}, changed={s.changed},"]
        if s.key:
            lines.append(f"    key={list(s.key)!r},")
    return "\n".join([*lines, ")"])
