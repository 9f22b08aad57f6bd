"""Numeric tolerance for ``dsha.testing.assert_equal``: which columns have one, and which differing rows have no
partner within it.

The rule (docs/testing.md, "Tolerance"): a value ``a`` of the actual table is within tolerance of a value ``e`` of
the expected table when both are null, or they are equal (NaN equals NaN, as in digests), or
``|a − e| <= atol + rtol · |e|`` with both finite (pyspark's ``assertDataFrameEqual`` and numpy's ``isclose``:
the expected value is the reference), in double arithmetic for FLOAT and DOUBLE columns, in decimal arithmetic for
DECIMAL columns (the tolerances read exactly from their shortest decimal form; where a term needs more than 38
digits, in double arithmetic). A null or NaN beside a number, and an infinity beside another value, are never
within.

Only the rows ``dsha.diff`` found differing are paired (equal rows are already equal). They are grouped by the
exact values of every column without tolerance (key columns included); in each group, each side's rows are ranked by
their tolerance columns (in the table's column order, nulls first, NaN last) and the rows of one rank are partners. A
row has a partner within tolerance when the group has a row of its rank on the other side and every tolerance column
of the two is within tolerance. With one tolerance column this finds a pairing whenever one exists (the intervals
``[e − atol − rtol·|e|, e + atol + rtol·|e|]`` move monotonically with ``e`` for ``rtol < 1``); with several, a
pairing that exists only in another order is not found, and the assertion fails: it never passes wrongly.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from dsha.dependencies import F, pyspark_sql, pyspark_types

__all__ = ["BeyondTolerance", "Tolerance", "TolerancesLike", "beyond_tolerance", "describe", "resolve"]


@dataclass(frozen=True)
class Tolerance:
    """``|actual − expected| <= atol + rtol · |expected|``. A bare number given as a tolerance is ``atol``."""

    atol: float = 0.0
    rtol: float = 0.0

    def __post_init__(self) -> None:
        for name in ("atol", "rtol"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float, Decimal)) or not math.isfinite(v) or v < 0:
                raise ValueError(f"tolerance {name} must be a finite number >= 0, not {v!r}")

    def __str__(self) -> str:
        return f"atol={self.atol:g} rtol={self.rtol:g}"


TolerancesLike = Union[float, Tolerance, Mapping[str, Union[float, Tolerance]], None]

_NUMERIC = ("FloatType", "DoubleType", "DecimalType")


def _as_tolerance(value: Any, where: str) -> Tolerance:
    if isinstance(value, Tolerance):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        raise TypeError(f"tolerance{where} must be a number (atol) or dsha.testing.Tolerance, not {value!r}")
    return Tolerance(atol=float(value))


def resolve(tolerance: TolerancesLike, schema: Any, key: Sequence[str]) -> Dict[str, Tolerance]:
    """Column -> its tolerance. A number or a ``Tolerance``: every top-level FLOAT, DOUBLE and DECIMAL column but the
    key's; a mapping: the columns it names, each of which must be one of those types and not a key column."""
    if tolerance is None:
        return {}
    types = {f.name: f.dataType for f in schema.fields}
    if not isinstance(tolerance, Mapping):
        t = _as_tolerance(tolerance, "")
        return {c: t for c, dt in types.items() if type(dt).__name__ in _NUMERIC and c not in key}
    out = {}
    for column, value in tolerance.items():
        if column not in types:
            raise ValueError(f"tolerance for column {column!r}: no such column (columns: {', '.join(types)})")
        if type(types[column]).__name__ not in _NUMERIC:
            raise ValueError(f"tolerance for column {column!r}: its type {types[column].simpleString()} is not "
                             f"float, double or decimal")
        if column in key:
            raise ValueError(f"tolerance for column {column!r}: a key column is compared exactly")
        out[column] = _as_tolerance(value, f" for column {column!r}")
    return {c: out[c] for c in types if c in out}  # in the table's column order


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _prefix(columns: Sequence[str]) -> str:
    """A prefix for working columns that no column of the tables starts with (compared case-insensitively)."""
    taken = [c.lower() for c in columns]
    i = 0
    while any(c.startswith(f"__dsha_t{i}_") for c in taken):
        i += 1
    return f"__dsha_t{i}_"


def _decimal(x: Union[float, Decimal]) -> Any:
    """``x`` as a DECIMAL literal, exactly (a float by its shortest repr); a null DECIMAL when that needs over 38
    digits."""
    exact = x if isinstance(x, Decimal) else Decimal(repr(float(x)))
    _, digits, exponent = exact.as_tuple()
    scale = max(0, -int(exponent))
    if scale > 38 or max(0, len(digits) + int(exponent)) + scale > 38:
        return F.lit(None).cast("decimal(38,0)")
    return F.lit(exact)


def _within(a: Any, e: Any, dtype: Any, t: Tolerance) -> Any:
    """The rule as a Column (never null). DECIMAL: in decimal arithmetic (``try_``: null where a result needs more
    than 38 digits), else, there only, in double arithmetic."""
    ad, ed = a.cast("double"), e.cast("double")
    bound = F.lit(float(t.atol)) + F.lit(float(t.rtol)) * F.abs(ed)
    # Both finite first: Spark orders NaN above every number (x <= NaN holds) and inf - inf is NaN.
    finite = (F.abs(ad) < F.lit(math.inf)) & (F.abs(ed) < F.lit(math.inf))
    in_doubles = finite & (F.abs(ad - ed) <= bound)
    close = in_doubles
    if isinstance(dtype, pyspark_types.DecimalType):
        bound = F.call_function("try_add", _decimal(t.atol),
                                F.call_function("try_multiply", _decimal(t.rtol), F.abs(e)))
        close = F.coalesce(F.abs(F.call_function("try_subtract", a, e)) <= bound, in_doubles)
    return a.eqNullSafe(e) | F.coalesce(close, F.lit(False))


class BeyondTolerance:
    """The rows of each side's excess that have no partner within tolerance (the module's rule), as one frame of
    unpartnered pairs (``frame``: a row holds an actual row, an expected row, or both when they pair by rank but
    differ beyond tolerance), so that persisting it and counting both sides (``counts``) is one job, not one per side.
    ``actual`` and ``expected``: each side's rows in its own columns."""

    def __init__(self, frame: Any, columns: List[str], aliases: Tuple[str, str], group: str) -> None:
        self.frame = frame
        self._columns = columns
        self._aliases = aliases
        self._group = group

    def _present(self, alias: str) -> Any:
        return F.col(f"{alias}.{_quoted(self._group)}").isNotNull()

    def _side(self, alias: str) -> Any:
        return self.frame.filter(self._present(alias)).select(
            *[F.col(f"{alias}.{_quoted(c)}").alias(c) for c in self._columns])

    @property
    def actual(self) -> Any:
        return self._side(self._aliases[0])

    @property
    def expected(self) -> Any:
        return self._side(self._aliases[1])

    def counts(self) -> Tuple[int, int]:
        """How many rows of each side have no partner within tolerance (one job over ``frame``)."""
        present = [F.sum(self._present(alias).cast("long")) for alias in self._aliases]
        row = self.frame.agg(*present).first()
        return int(row[0] or 0), int(row[1] or 0)


def beyond_tolerance(only_actual: Any, only_expected: Any, tolerances: Dict[str, Tolerance]) -> BeyondTolerance:
    """The rows of each side's excess that have no partner within tolerance (the module's rule). Both frames have the
    same columns in the same order (``dsha.diff``'s ``only_left``/``only_right``)."""
    columns: List[str] = list(only_actual.columns)
    types = {f.name: f.dataType for f in only_actual.schema.fields}
    exact = [c for c in columns if c not in tolerances]
    p = _prefix(columns)
    group, rank, a, e = p + "group", p + "rank", p + "a", p + "e"
    group_value = F.call_function("logical_hash", *[F.col(_quoted(c)) for c in exact]) if exact else F.lit(b"")
    order = [F.col(_quoted(c)).asc_nulls_first() for c in tolerances]
    window = pyspark_sql.Window.partitionBy(group).orderBy(*order)

    def ranked(df: Any, alias: str) -> Any:
        return df.withColumn(group, group_value).withColumn(rank, F.row_number().over(window)).alias(alias)

    col = lambda alias, name: F.col(f"{alias}.{_quoted(name)}")
    pairs = ranked(only_actual, a).join(
        ranked(only_expected, e), (col(a, group) == col(e, group)) & (col(a, rank) == col(e, rank)), "full_outer")
    partnered = col(a, group).isNotNull() & col(e, group).isNotNull()
    for c, t in tolerances.items():
        partnered = partnered & _within(col(a, c), col(e, c), types[c], t)
    return BeyondTolerance(pairs.filter(~partnered), columns, (a, e), group)


def describe(tolerances: Dict[str, Tolerance], limit: int = 6) -> Optional[str]:
    """One line: each column's tolerance (the first ``limit``)."""
    if not tolerances:
        return None
    parts = [f"{c} {t}" for c, t in list(tolerances.items())[:limit]]
    more = len(tolerances) - limit
    return "tolerance: " + ", ".join(parts) + (f", and {more} more columns" if more > 0 else "")
