"""The differing rows of a diff as an aligned text table (dsha.core.diff_table): rows only left and only right paired
where they differ in few cells, the differing cells marked, long values cut visibly, wide tables cut to the columns
that differ (and the first ones) or wrapped. Pure Python: the report is built by hand, as Diff.report fills it."""
import datetime
import math
from decimal import Decimal

from dsha.core.diff_report import UNCHANGED, ChangedValue, DiffReport, DiffSummary, RowsShown
from dsha.core.diff_table import cell_text, pair_rows, rows_table


def summary(key=()):
    return DiffSummary(equal=False, algorithm="dsha-v1", method="sketch", left_rows=20, right_rows=20,
                       left_digest="f81b", right_digest="f81c", only_left=2, only_right=2, changed=0, key=key,
                       duplicate_keys=0, columns=None, column_digests=(), schema=None)


def report(left, right, columns=("id", "name", "score"), totals=None, key=()):
    sections = []
    for kind, rows, total in (("only_left", left, (totals or {}).get("left")),
                              ("only_right", right, (totals or {}).get("right"))):
        if rows is not None:
            sections.append(RowsShown(kind, tuple(columns), ("?",) * len(columns), tuple(map(tuple, rows)),
                                      total if total is not None else len(rows)))
    return DiffReport(summary(key), tuple(sections), 10)


def test_a_changed_value_is_paired_and_marked_and_other_rows_stand_alone():
    lines = rows_table(report([(3, "name3", 4.5), (7, "name7", 10.5)], [(3, "name3", 5.5), (9, "x", None)]))
    assert lines == [
        "- only left (2 of 2), + only right (2 of 2); 1 paired where few cells differ, ^ what differs:",
        "    id  name   score",
        "  - 3   name3  4.5",
        "  + 3   name3  5.5",
        "               ^^^",
        "  - 7   name7  10.5",
        "  + 9   x      null",
    ]


def test_pairs_are_chosen_by_most_equal_cells():
    left = [(1, "a", "p", "q"), (2, "b", "p", "q")]
    right = [(2, "b", "p", "z"), (1, "a", "x", "y"), (5, "e", "f", "g")]
    # (2,b,p,q)~(2,b,p,z): 3 equal cells, taken first; (1,a,p,q)~(1,a,x,y): 2 of 4 equal, still a pair; (5,...) alone
    assert pair_rows(left, right) == [(0, 1), (1, 0)]
    assert pair_rows([(1, "a", "p")], [(2, "b", "p")]) == []  # 1 equal cell of 3: not a pair
    assert pair_rows([(float("nan"), "a")], [(float("nan"), "b")]) == [(0, 0)]  # NaN equals NaN, as in dsha
    lines = rows_table(report(left, right, columns=("k", "a", "b", "c")))
    assert lines[1:] == [
        "    k  a  b  c",
        "  - 1  a  p  q",
        "  + 1  a  x  y",
        "          ^  ^",
        "  - 2  b  p  q",
        "  + 2  b  p  z",
        "             ^",
        "  + 5  e  f  g",
    ]


def test_long_values_are_cut_around_their_difference():
    text = "The quick brown fox jumps over the lazy dog " * 2
    lines = rows_table(report([(1, text + "A")], [(1, text + "B")], columns=("id", "comment"),
                              totals={"left": 5}))
    assert lines == [
        "- only left (1 of 5), + only right (1 of 1); 1 paired where few cells differ, ^ what differs:",
        "    id  comment",
        "  - 1   …ox jumps over the lazy dog A",
        "  + 1   …ox jumps over the lazy dog B",
        "                                    ^",
        "  (4 more only left)",
    ]
    alone = rows_table(report([(1, "x" * 40)], None, columns=("id", "v")), max_chars=10)
    assert alone[2] == "  - 1   xxxxxxxxx…"


def test_a_wide_table_keeps_the_differing_columns_and_the_first_ones():
    columns = tuple(f"column_{i}" for i in range(12))
    right = list(range(1000, 1012))
    right[7], right[9] = 7, None
    lines = rows_table(report([tuple(range(1000, 1012))], [tuple(right)], columns=columns), width=60)
    assert lines[1:] == [
        "    column_0  column_1  column_7  column_9",
        "  - 1000      1001      1007      1009",
        "  + 1000      1001      7         null",
        "                        ^         ^^^^",
        "  (8 more columns, equal in every pair shown: column_2, …)",
    ]


def test_a_wide_table_without_pairs_wraps_into_blocks():
    columns = ("a_long_column_name", "another_long_name", "third_long_name")
    lines = rows_table(report([("x", "y", "z")], None, columns=columns), width=50)
    assert lines == [
        "- only left (1 of 1):",
        "    a_long_column_name  another_long_name",
        "  - x                   y",
        "",
        "    third_long_name",
        "  - z",
    ]


def test_keyed_changes_show_the_key_and_the_changed_columns():
    changed = RowsShown("changed", ("id", "name", "price"), ("int", "left → right", "left → right"),
                        ((3, UNCHANGED, ChangedValue("2.00", "3.00")), (4, ChangedValue("a", None), UNCHANGED)), 2)
    left = RowsShown("only_left", ("id", "name", "price"), ("int", "string", "decimal(4,2)"),
                     ((7, "n7", Decimal("1.50")),), 1)
    lines = rows_table(DiffReport(summary(key=("id",)), (changed, left), 10))
    assert lines == [
        "changed (2 of 2; key id): - left, + right, ^ what differs",
        "    id  name  price",
        "  - 3         2.00",
        "  + 3         3.00",
        "              ^^^^",
        "  - 4   a",
        "  + 4   null",
        "        ^^^^",
        "- only left (1 of 1):",
        "    id  name  price",
        "  - 7   n7    1.50",
    ]


def test_cell_text_says_what_a_value_is():
    assert [cell_text(v) for v in (None, "null", "", " a", "a\tb", "plain", b"\x00\xff", True, 2.0, float("nan"),
                                   Decimal("1.10"), datetime.date(2024, 1, 2),
                                   datetime.datetime(2024, 1, 2, 3, 4, 5), {"a": [1, None], "b": "x"})] == [
        "null", '"null"', '""', '" a"', '"a\\tb"', "plain", "0x00ff", "true", "2.0", "NaN", "1.10", "2024-01-02",
        "2024-01-02 03:04:05", "{a: [1, null], b: x}"]
    assert math.isnan(float("nan"))


def test_wide_characters_keep_columns_aligned():
    lines = rows_table(report([("東京", 1)], [("x", 2)], columns=("city", "n")))
    assert lines[1:] == ["    city  n", "  - 東京  1", "  + x     2"]
