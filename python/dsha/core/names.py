"""Names close to a misspelt one, for "did you mean" in errors: the one matcher of column names (``--columns``,
``dsha.changed(columns=...)``) and table names (``table:NAME`` inputs, a table Spark cannot find)."""
from __future__ import annotations

import difflib
from typing import Sequence

__all__ = ["did_you_mean"]


def did_you_mean(missing: Sequence[str], available: Sequence[str]) -> str:
    """The closest of ``available`` to each of ``missing`` (difflib, case-insensitively), as ``: did you mean x?``;
    empty when none is close."""
    by_lower = {c.lower(): c for c in available}
    close = [by_lower[m] for w in missing for m in difflib.get_close_matches(w.lower(), list(by_lower), n=1)]
    return f": did you mean {', '.join(dict.fromkeys(close))}?" if close else ""
