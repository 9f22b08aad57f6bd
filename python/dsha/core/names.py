"""Names close to a misspelt one, for "did you mean" in errors: the one matcher of column names (``--columns``,
``dsha.changed(columns=...)``) and table names (``table:NAME`` inputs, a table Spark cannot find); and the one rule of
``exclude=`` (``without_excluded``: the columns left when some are left out), which every engine and command asks."""
from __future__ import annotations

import difflib
from typing import List, Optional, Sequence, Tuple, Union

__all__ = ["Names", "did_you_mean", "name_list", "without_excluded"]


def did_you_mean(missing: Sequence[str], available: Sequence[str]) -> str:
    """The closest of ``available`` to each of ``missing`` (difflib, case-insensitively), as ``: did you mean x?``;
    empty when none is close."""
    by_lower = {c.lower(): c for c in available}
    close = [by_lower[m] for w in missing for m in difflib.get_close_matches(w.lower(), list(by_lower), n=1)]
    return f": did you mean {', '.join(dict.fromkeys(close))}?" if close else ""


Names = Union[str, Sequence[str], None]


def name_list(value: Names, option: str) -> List[str]:
    """A column name or a list of them as a list (None: none); anything but names is a TypeError naming ``option``."""
    names = [value] if isinstance(value, str) else list(value or [])
    wrong = [n for n in names if not isinstance(n, str)]
    if wrong:
        raise TypeError(f"{option} takes column names (str), not {type(wrong[0]).__name__}: select and alias an "
                        f"expression first")
    return names


def _find(name: str, available: Sequence[str]) -> Optional[str]:
    """``name`` as ``available`` spells it: itself, else its one case-insensitive match (as Spark resolves names)."""
    if name in available:
        return name
    matches = [c for c in available if c.lower() == name.lower()]
    return matches[0] if len(matches) == 1 else None


def without_excluded(exclude: Names, sides: Sequence[Tuple[str, Sequence[str]]],
                     columns: Optional[Sequence[str]] = None, key: Sequence[str] = ()) -> Optional[List[List[str]]]:
    """The columns each side keeps when ``exclude`` leaves columns out (audit columns such as ``_ingested_at``):
    ``columns`` (default: all of the side's, in its order) without the excluded ones; None when nothing is excluded.

    ``sides``: (what a side is called, its column names), one for a fingerprint, two for a comparison. A name is
    matched as Spark resolves it (exactly, else case-insensitively) and dropped from every side that has it, so a
    column only one side has can be left out; one that no side has is a ValueError with the closest names. Leaving
    out a ``key`` column, or every column of a side, is a ValueError too.

    >>> without_excluded(["_ingested_at"], [("the table", ["id", "v", "_ingested_at"])])
    [['id', 'v']]
    """
    dropped = name_list(exclude, "exclude")
    if not dropped:
        return None
    available = [c for _, names in sides for c in names]
    unknown = [n for n in dropped if all(_find(n, names) is None for _, names in sides)]
    if unknown:
        where = " or ".join(side for side, _ in sides)
        raise ValueError(f"excluded column {', '.join(unknown)} is not a column of {where}"
                         f"{did_you_mean(unknown, available)} (columns: {', '.join(dict.fromkeys(available))})")
    keyed = [k for k in key if any(k.lower() == n.lower() for n in dropped)]
    if keyed:
        raise ValueError(f"key column {', '.join(keyed)} is excluded: the key pairs the rows, so it cannot be left out")
    kept = []
    for side, names in sides:
        gone = {_find(n, names) for n in dropped} - {None}
        chosen = [c for c in (names if columns is None else columns) if (_find(c, names) or c) not in gone]
        if not chosen:
            raise ValueError(f"excluding {', '.join(dropped)} leaves no column of {side}")
        kept.append(chosen)
    return kept
