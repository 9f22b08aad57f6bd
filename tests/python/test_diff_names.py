"""dsha.diff over tables whose columns are named like its own working columns and output columns (issue 34, case 6):
the differing rows must still be exactly exceptAll both ways, through the sketch, the deduplicating and the join
paths, with and without a key; struct field order does not make columns "retyped" (SPEC.md §7). Classic and Spark
Connect."""
import json
import os
import warnings
from collections import Counter

import pytest
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, StringType, StructField, StructType

import dsha
from dsha.errors import DshaWarning

pytestmark = pytest.mark.skipif(os.environ.get("DSHA_SPARK_MODE") == "connect",
                                reason="working names are chosen in Python whatever the transport: once, in the classic "
                                "pass (test_diff runs dsha.diff on Connect)")

# Every name dsha.diff has used for its own columns and aliases, the names it shows (changed's columns), their case
# and Unicode look-alikes (Spark resolves names case-insensitively), and names that need quoting.
TRICKY = ["__dsha_side", "__dsha_digest", "__dsha_count", "__dsha_copy", "column", "left_value", "right_value", "x",
          "nl", "nr", "__l", "__r", "l", "r", "a", "k", "s", "i", "c", "v", "n", "cv", "paired", "a.b", "we`ird",
          "with space", "ünï 名", "__dsha_l", "__dsha1_side"]
CASE_FOLDED = ["__DSHA_SIDE", "__dſha_digest", "__dsha_COUNT", "Column", "X"]  # ſ: Java upper-cases it to S


def quoted(name):
    return "`" + name.replace("`", "``") + "`"


def table(spark, n, first, others):
    """``first`` holds the row number; every other column a string of it, distinct per column. Local rows: a plan of
    many derived columns and filters makes Spark's constraint propagation run out of memory."""
    schema = StructType([StructField(first, IntegerType())] + [StructField(c, StringType()) for c in others])
    return spark.createDataFrame([(i, *[f"v{j}-{i % 97}-{i}" for j in range(len(others))]) for i in range(n)], schema)


def changed_copy(left, first, others, modified):
    """left with rows 0..modified-1 changed in two columns (the first two others), rows 300-302 deleted, three new
    rows."""
    id_ = F.col(quoted(first))
    right = left.where(~id_.between(300, 302))
    for c in others[:2]:
        right = right.withColumn(c, F.when(id_ < modified, F.lit("changed")).otherwise(F.col(quoted(c))))
    return right.unionByName(left.where(id_ < 3).withColumn(first, id_ + 10000))


def rows_of(df):
    return Counter(tuple(r) for r in df.collect())


def except_all(left, right):
    """exceptAll both ways, as multisets of rows: the multiset differences of the collected tables (what exceptAll
    computes; in Python, one small job per side instead of two shuffles)."""
    ours, theirs = rows_of(left), rows_of(right)
    return ours - theirs, theirs - ours


def assert_except_all(d, left, right):
    """Without a key: only_left and only_right are the multisets left.exceptAll(right) and right.exceptAll(left),
    with the tables' own columns, in their order."""
    assert d.only_left.columns == left.columns and d.only_right.columns == left.columns
    expected_left, expected_right = except_all(left, right)
    assert rows_of(d.only_left) == expected_left and rows_of(d.only_right) == expected_right
    assert (d.only_left_count, d.only_right_count) == (sum(expected_left.values()), sum(expected_right.values()))
    assert expected_left and expected_right


def assert_keyed(d, left, right, key):
    """With a key: the reference pairs exceptAll's rows whose key is once on each side, in Python."""
    only_left, only_right = except_all(left, right)
    ours_left, ours_right = [dict(zip(left.columns, r)) for r in only_left.elements()], \
        [dict(zip(right.columns, r)) for r in only_right.elements()]
    per_key_left = Counter(r[key] for r in ours_left)
    per_key_right = Counter(r[key] for r in ours_right)
    paired = {k for k in per_key_left if per_key_left[k] == 1 and per_key_right.get(k) == 1}
    by_key_right = {r[key]: r for r in ours_right if r[key] in paired}
    expected_changes = Counter(
        (r[key], c, r[c], by_key_right[r[key]][c]) for r in ours_left if r[key] in paired
        for c in left.columns if c != key and r[c] != by_key_right[r[key]][c])
    column, left_value, right_value = d.change_names
    assert d.changed.columns == [key, column, left_value, right_value]
    assert Counter(tuple(r) for r in d.changed.collect()) == expected_changes and expected_changes
    ambiguous = {k for k in per_key_left if per_key_right.get(k) and max(per_key_left[k], per_key_right[k]) > 1}
    assert d.changed_count == len(paired) and d.duplicate_keys == len(ambiguous)
    assert rows_of(d.only_left) == Counter(tuple(r.values()) for r in ours_left if r[key] not in paired)
    assert rows_of(d.only_right) == Counter(tuple(r.values()) for r in ours_right if r[key] not in paired)
    assert (d.only_left_count, d.only_right_count) == (sum(r[key] not in paired for r in ours_left),
                                                       sum(r[key] not in paired for r in ours_right))
    assert d.columns == {c: sum(1 for _, name, _, _ in expected_changes if name == c) for c in left.columns
                         if c != key}


PATHS = {
    # path: (rows changed, extra copies of rows on the left, diff options)
    "sketch": (5, 0, {}),  # every digest in excess once: the filtered rows as they are
    "dedup": (5, 2, {}),  # a row twice more on the left: its copies are deduplicated and repeated
    "join": (120, 2, {"cells": 12, "max_cells": 96}),  # beyond the budget: the join of per-digest counts
}


def run_diff(left, right, key, options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        d = dsha.diff(left, right, key=key, **options)
    fallback = [w for w in caught if issubclass(w.category, DshaWarning) and "join of per-digest" in str(w.message)]
    assert bool(fallback) == ("max_cells" in options), d.method
    return d


# Every path without a key and with a key named like a working column; the other keys (pairing does not depend on the
# path that found the rows) through the sketch path.
CASES = [(path, key) for path in sorted(PATHS) for key in (None, "__dsha_side")] + [
    ("sketch", key) for key in ("x", "column", "nl", "we`ird")]


@pytest.mark.parametrize("path, key", CASES)
def test_columns_named_like_working_and_output_columns(spark, path, key):
    modified, copies, options = PATHS[path]
    first = key or "__dsha_digest"
    others = [c for c in TRICKY if c != first]
    left = table(spark, 400, first, others)
    right = changed_copy(left, first, others, modified)
    if copies:
        # Row 7 three times on the left, once on the right (excess 2); row 8 twice (excess 1).
        left = left.unionByName(left.where(F.col(quoted(first)) == 7)).unionByName(
            left.where(F.col(quoted(first)).isin(7, 8)))
    with run_diff(left, right, key, options) as d:
        assert not d and d.schema_difference is None
        if path == "join":
            assert d.method.startswith("join of per-digest counts")
        else:
            assert d.method == "sketch"
        if key is None:
            assert_except_all(d, left, right)
            assert d.columns[others[0]] >= modified and d.columns[others[-1]] >= 3  # every column of the new rows
        else:  # with copies, keys 7 and 8 are only in the left's excess (7 twice): not paired
            assert_keyed(d, left, right, key)


def test_case_folded_names_take_another_prefix(spark):
    """Column names equal to working names only case-insensitively (as Spark resolves them by default) make the diff
    choose another prefix; the rows are still exceptAll's."""
    from dsha.spark.diff_names import WorkingNames

    assert WorkingNames.avoiding(["id"], CASE_FOLDED).prefix == "__dsha1_"
    assert WorkingNames.avoiding(["id"], ["__dsha_", "__dsha1_x"]).prefix == "__dsha2_"
    left = table(spark, 400, "id", CASE_FOLDED)
    right = changed_copy(left, "id", CASE_FOLDED, 5)
    with dsha.diff(left, right) as d:
        assert_except_all(d, left, right)
    with dsha.diff(left, right, key="Column") as d:
        assert d.change_names == ("_column", "_left_value", "_right_value")
        assert_keyed(d, left, right, "Column")


def test_changed_output_names_move_aside_for_a_key_named_like_them(spark):
    """A key named column (or left_value, right_value) keeps its name; changed's own columns become _column,
    _left_value, _right_value (or with more _ while one is a key)."""
    for key, expected in (("left_value", ("_column", "_left_value", "_right_value")),
                          ("_column", ("column", "left_value", "right_value"))):
        others = [c for c in ["column", "_column", "__column", "right_value", "v"] if c != key]
        left = table(spark, 400, key, others)
        right = changed_copy(left, key, others, 4)
        with dsha.diff(left, right, key=key) as d:
            assert d.change_names == expected
            assert_keyed(d, left, right, key)
    left = table(spark, 400, "id", ["v"])
    right = changed_copy(left, "id", ["v"], 4)
    two = dsha.diff(left.withColumnRenamed("v", "column"), right.withColumnRenamed("v", "column"),
                    key=["id", "column"])
    assert two.change_names == ("_column", "_left_value", "_right_value")
    assert two.changed.columns == ["id", "column", "_column", "_left_value", "_right_value"]


STRUCTS_LEFT = ["id", "NAMED_STRUCT('a', id % 7, 'b', CAST(id AS STRING)) AS s",
                "ARRAY(NAMED_STRUCT('p', id, 'q', NAMED_STRUCT('y', 'k', 'x', id % 3))) AS arr",
                "MAP(CAST(id % 5 AS STRING), NAMED_STRUCT('m', id, 'n', 'z')) AS m",
                "IF(id % 4 = 0, NULL, NAMED_STRUCT('a', 1, 'b', 'c')) AS maybe"]
STRUCTS_RIGHT = ["id", "NAMED_STRUCT('b', CAST(id AS STRING), 'a', id % 7) AS s",
                 "ARRAY(NAMED_STRUCT('q', NAMED_STRUCT('x', id % 3, 'y', 'k'), 'p', id)) AS arr",
                 "MAP(CAST(id % 5 AS STRING), NAMED_STRUCT('n', 'z', 'm', id)) AS m",
                 "IF(id % 4 = 0, NULL, NAMED_STRUCT('b', 'c', 'a', 1)) AS maybe"]


def row_digests(df):
    return Counter(bytes(r[0]) for r in df.select(
        F.call_function("logical_hash", *[F.col(quoted(c)) for c in df.columns])).collect())


def test_struct_field_order_is_not_a_difference(spark):
    """SPEC.md §7: struct fields are identified by name. dsha.equal and dsha.diff agree: the same values with fields
    in another order, at every depth (in arrays, map values, null structs), are equal; a changed row is found, and
    the right's rows come in the left's layout (so that they compare with the left's)."""
    left, right = spark.range(300).selectExpr(*STRUCTS_LEFT), spark.range(300).selectExpr(*STRUCTS_RIGHT)
    assert dsha.equal(left, right)
    same = dsha.diff(left, right)
    assert same and same.schema_difference is None and same.left_digest == same.right_digest
    edited = right.withColumn("s", F.when(F.col("id") == 5, F.struct(F.lit("new").alias("b"), F.lit(0).cast("bigint")
                                                                     .alias("a"))).otherwise(F.col("s")))
    with dsha.diff(left, edited) as d:
        assert not dsha.equal(left, edited)
        assert not d and (d.only_left_count, d.only_right_count) == (1, 1)
        assert d.only_right.schema.simpleString() == left.schema.simpleString()
        # The reference: exceptAll over canonical row digests (field order plays no part in them).
        assert row_digests(d.only_left) == row_digests(left) - row_digests(edited)
        assert row_digests(d.only_right) == row_digests(edited) - row_digests(left)
        assert d.columns == {"id": 0, "s": 1, "arr": 0, "m": 0, "maybe": 0}
    with dsha.diff(left, edited, key="s") as d:  # a struct key, joined across the two field orders
        assert (d.only_left_count, d.only_right_count, d.changed_count) == (1, 1, 0)
    with dsha.diff(left, edited.withColumn("id", F.when(F.col("id") == 9, -9).otherwise(F.col("id"))), key="arr") as d:
        # An array of structs as the key: rows 5 (s changed) and 9 (id changed) are paired across the field orders.
        assert (d.changed_count, d.only_left_count, d.only_right_count) == (2, 0, 0)
        changes = sorted((r["column"], r["left_value"], r["right_value"]) for r in d.changed.collect())
        assert changes[0] == ("id", "9", "-9") and changes[1][0] == "s" and "new" in changes[1][2]
    retyped = dsha.diff(left, right.withColumn("s", F.struct(F.col("s.b").alias("b"), F.col("s.a").cast("int")
                                                             .alias("a"))))
    assert retyped.method == "schema" and [n for n, _, _ in retyped.schema_difference.retyped] == ["s"]
    assert not dsha.equal(left, right.withColumn("s", F.struct(F.col("s.b"), F.col("s.a").cast("int"))))


def test_cli_diff_with_a_key_named_x(spark, tmp_path):
    """dsha diff --key x over tables with columns x, column, __dsha_side: exit 1 and the rows of exceptAll."""
    from cli_runner import run_cli

    others = ["column", "__dsha_side", "left_value", "nl"]
    left = table(spark, 400, "x", others)
    right = changed_copy(left, "x", others, 4)
    left.write.parquet(str(tmp_path / "a"))
    right.write.parquet(str(tmp_path / "b"))
    left, right = spark.read.parquet(str(tmp_path / "a")), spark.read.parquet(str(tmp_path / "b"))
    out = run_cli("diff", tmp_path / "a", tmp_path / "b", "--key", "x", "--json", "--limit", "100")
    assert out.returncode == 1, out.stdout + out.stderr
    report = json.loads(out.stdout)
    only_left, only_right = except_all(left, right)
    ours_left, ours_right = [dict(zip(left.columns, r)) for r in only_left.elements()], \
        [dict(zip(right.columns, r)) for r in only_right.elements()]
    paired = {r["x"] for r in ours_left} & {r["x"] for r in ours_right}
    right_by_key = {r["x"]: r for r in ours_right}
    expected = sorted((r["x"], c, r[c], right_by_key[r["x"]][c]) for r in ours_left if r["x"] in paired
                      for c in others if r[c] != right_by_key[r["x"]][c])
    got = sorted((r["x"], r["column"], r["left_value"], r["right_value"]) for r in report["rows"]["changed"])
    assert got == expected and report["changed"] == len(paired) == 4
    assert sorted(json.dumps(r, sort_keys=True) for r in report["rows"]["only_left"]) == sorted(
        json.dumps(r, sort_keys=True) for r in ours_left if r["x"] not in paired)
    assert sorted(json.dumps(r, sort_keys=True) for r in report["rows"]["only_right"]) == sorted(
        json.dumps(r, sort_keys=True) for r in ours_right if r["x"] not in paired)
