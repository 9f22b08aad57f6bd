"""The names ``dsha.diff`` adds beside the user's columns, chosen per call so that none can be one of them.

Working columns (a row's digest, its side, its count, ...) and the aliases of joined tables all start with one prefix
that no column of either table starts with; the names a user sees in ``changed`` (``column``, ``left_value``,
``right_value``) are prefixed with ``_`` while a key column has one of them. Spark resolves names case-insensitively
by default (Java's ``equalsIgnoreCase``: ``ſ`` matches ``s``, ``ı`` matches ``i``), so names are compared folded the
same way, whatever ``spark.sql.caseSensitive`` says.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Iterable, Tuple

__all__ = ["CHANGE_NAMES", "WorkingNames", "change_names", "folded", "quoted"]

# The non-key columns of ``Diff.changed``, as they are named unless a key column has one of these names.
CHANGE_NAMES = ("column", "left_value", "right_value")


def quoted(name: str) -> str:
    """``name`` as one column reference, whatever it holds (dots, backticks, spaces)."""
    return "`" + name.replace("`", "``") + "`"


def folded(name: str) -> str:
    """``name`` as Spark's case-insensitive resolution compares it: each character upper-cased, then lower-cased
    (Java's ``equalsIgnoreCase``; a character whose upper case is several characters is only lower-cased)."""
    return "".join(c.upper().lower() if len(c.upper()) == 1 else c.lower() for c in name)


@dataclass(frozen=True)
class WorkingNames:
    """The working names of one diff: each is ``prefix`` and its role (letters and ``_``: no quoting needed).
    ``digest``: a row's digest; ``count``: a digest's signed excess; ``side``: ``left`` or ``right``, which side's
    excess a differing row is; ``copy``: the copy number of a row repeated as often as it is in excess."""

    prefix: str
    digest: str
    count: str
    side: str
    copy: str

    @classmethod
    def avoiding(cls, *column_lists: Iterable[str]) -> WorkingNames:
        """The first of ``__dsha_``, ``__dsha1_``, ``__dsha2_``, ... that no column of ``column_lists`` starts with
        (compared as Spark compares names): no working name can then be a user column's."""
        taken = [folded(c) for columns in column_lists for c in columns]
        for i in itertools.count():
            prefix = "__dsha_" if i == 0 else f"__dsha{i}_"
            if not any(c.startswith(prefix) for c in taken):
                return cls(prefix, *(prefix + role for role in ("digest", "count", "side", "copy")))
        raise AssertionError("unreachable")  # pragma: no cover

    def name(self, role: str) -> str:
        """Another working name (an alias of a joined table, a tag column)."""
        return self.prefix + role


def change_names(key: Iterable[str]) -> Tuple[str, str, str]:
    """``CHANGE_NAMES``, each prefixed with as few ``_`` as make all three differ from every key column's name."""
    keys = {folded(k) for k in key}
    for underscores in itertools.count():
        names = tuple("_" * underscores + n for n in CHANGE_NAMES)
        if not keys & {folded(n) for n in names}:
            return names  # type: ignore[return-value]
    raise AssertionError("unreachable")  # pragma: no cover
