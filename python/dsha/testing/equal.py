"""``dsha.testing.assert_equal``: a test assertion that two DataFrames hold the same rows, by digest.

Equal tables cost one pass over each side (``dsha.equal``); only when the digests differ does ``dsha.diff`` find the
differing rows, which the message shows (``report``) and the tolerance, if any, pairs up (``tolerance``).
"""
from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple, Union

import dsha
from dsha.spark.frames import excluding
from dsha.testing.report import MAX_ROWS_SHOWN, report, schema_report
from dsha.testing.tolerance import TolerancesLike, beyond_tolerance, describe, resolve

__all__ = ["assert_equal"]

Names = Union[str, Sequence[str], None]


def _names(value: Names) -> list:
    return [value] if isinstance(value, str) else list(value or [])


def _check_columns(what: str, names: Sequence[str], actual: Any, expected: Any) -> None:
    for side, df in (("actual", actual), ("expected", expected)):
        missing = [c for c in names if c not in df.columns]
        if missing:
            raise ValueError(f"{what} {', '.join(missing)} is not a column of {side} (columns: "
                             f"{', '.join(df.columns)})")


def _chosen(actual: Any, expected: Any, key: list, columns: Names, exclude: Names) -> Tuple[Any, Any]:
    """Both sides restricted to ``columns`` (the key's first), without ``exclude`` (where a side has them): the rule
    of ``exclude=`` in ``dsha.fingerprint``, ``dsha.equal`` and ``dsha.diff`` (``dsha.spark.frames.excluding``)."""
    chosen = _names(columns)
    _check_columns("column", chosen, actual, expected)
    _check_columns("key column", key, actual, expected)
    picked = key + [c for c in chosen if c not in key] if chosen else None
    if _names(exclude):
        left, right = excluding(exclude, [actual, expected], ["actual", "expected"], picked, key)
        return left, right
    if picked is None:
        return actual, expected
    select = lambda df: df.select(*["`" + c.replace("`", "``") + "`" for c in picked])
    return select(actual), select(expected)


def assert_equal(actual: Any, expected: Any, key: Names = None, columns: Names = None,
                 tolerance: TolerancesLike = None, *, exclude: Names = None, max_rows: int = 5,
                 check_row_order: bool = False, html: Optional[str] = None) -> None:
    """Asserts that ``actual`` and ``expected`` hold the same rows, as multisets (row order never matters, duplicates
    always count), for pytest and unittest alike (an ``AssertionError``), classic and Spark Connect.

    Equal tables pass after one pass over each side (``dsha.equal``: their digests are equal). Otherwise
    ``dsha.diff`` finds the differing rows and the ``AssertionError`` says, in a bounded message (under 60 lines of at
    most 200 characters, whatever the tables): the schema difference (added, removed, retyped columns), or the row
    counts, how many rows are only in each table, with ``key=`` how many rows changed and the first changed values
    (actual -> expected), the first ``max_rows`` (at most 15) rows only in each, and per column how many differing
    rows differ in it.

    ``key``: the column(s) that identify a row, for pairing differing rows into changes (the assertion itself does
    not depend on it). ``columns``: compare only these; ``exclude``: compare all but these (audit columns such as
    ``_ingested_at``).

    ``tolerance``: a number (an absolute tolerance) or ``Tolerance(atol=, rtol=)`` for every FLOAT, DOUBLE and
    DECIMAL column, or a dict column -> number or ``Tolerance``. A value is within tolerance when
    ``|actual − expected| <= atol + rtol · |expected|`` (as pyspark's ``assertDataFrameEqual``), both are null, or
    they are equal (NaN is equal to NaN). It is applied to the differing rows only, which pass when each has a
    partner on the other side equal in every other column and within tolerance in these; the exact rule is in
    ``dsha.testing.tolerance`` and docs/testing.md. Values nested in arrays, maps and structs are compared exactly.

    ``html``: a local file that a failure also writes ``dsha.diff``'s HTML report to (``Diff.to_html``: the
    differing rows as tables, actual against expected), named at the end of the message; nothing is written when the
    assertion passes.

    ``check_row_order`` is not applicable: digests do not depend on row order, so ``True`` raises ``ValueError``
    (compare ``df.collect()`` lists for an ordering test).
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not this function's
    if check_row_order:
        raise ValueError("check_row_order=True is not applicable: dsha digests do not depend on row order (compare "
                         "collected rows to test an ordering)")
    if isinstance(max_rows, bool) or not isinstance(max_rows, int) or not 0 <= max_rows <= MAX_ROWS_SHOWN:
        raise ValueError(f"max_rows must be an int from 0 to {MAX_ROWS_SHOWN}, not {max_rows!r}")
    keys = _names(key)
    actual, expected = _chosen(actual, expected, keys, columns, exclude)
    tolerances = resolve(tolerance, actual.schema, keys)
    compared = dsha.equal(actual, expected)
    if compared:
        return
    rows = (compared.left.rows, compared.right.rows)
    message = _failure(actual, expected, rows, keys, tolerances, max_rows, html)
    if message is not None:
        raise AssertionError(message)


def _written(message: str, d: Any, html: Optional[str], what: str = "") -> str:
    """``message``, and when ``html`` names a file, ``d``'s HTML report written there and named."""
    if html is None:
        return message
    d.to_html(html, names=("actual", "expected"))
    return f"{message}\nreport{what}: {html}"


def _failure(actual: Any, expected: Any, rows: Tuple[int, int], key: list, tolerances: dict,
             max_rows: int, html: Optional[str] = None) -> Optional[str]:
    """The message for tables whose digests differ; None when every differing row has a partner within tolerance.
    ``html``: where the report of the diff the message shows is written, if anywhere."""
    with dsha.diff(actual, expected, key=None if tolerances else (key or None)) as d:
        if d.schema_difference:
            return _written(schema_report(rows, d.schema_difference.explain()), d, html)
        if d.equal:  # the digests differed a moment ago
            return ("DataFrames differ, then were equal when read again: is an input non-deterministic (rand(), a "
                    "limit without an order, files that changed)?")
        if not tolerances:
            return _written(report(rows, d, max_rows), d, html)
        lonely = beyond_tolerance(d.only_left, d.only_right, tolerances)
        lonely.frame.persist()  # counted, then diffed: the pairing (windows and a join) runs once
        try:
            beyond = lonely.counts()
            if beyond == (0, 0):
                return None
            notes = [f"{beyond[0]:,} of {d.only_left_count:,} rows only in actual and {beyond[1]:,} of "
                     f"{d.only_right_count:,} only in expected have no partner within tolerance (shown below)",
                     describe(tolerances) or ""]
            with dsha.diff(lonely.actual, lonely.expected, key=key or None) as beyond_diff:
                # the report: the exact diff of the tables (its numbers are theirs), every differing row
                return _written(report(rows, beyond_diff, max_rows, notes), d, html, " (exact, before tolerance)")
        finally:
            lonely.frame.unpersist()
