"""dsha.diff (SPEC.md §17): the differing rows, without a key, against exceptAll both ways; with a key, against a
join; the fallback; bad input. Classic and Spark Connect; both codegen modes."""
import json
import os
import warnings
from collections import Counter

import pytest
from conftest import MODE, PASS_MODES
from pyspark.sql import functions as F

import dsha
from dsha.errors import DshaWarning
from dsha.spark.session import session_settings

NESTED = """id, CAST(id * 1000003 % 99991 AS DECIMAL(38, 6)) / 7 AS amount,
    CAST(id % 997 AS DECIMAL(9, 2)) AS price,
    IF(id % 11 = 0, NULL, CONCAT('n', CAST(id % 101 AS STRING))) AS name,
    IF(id % 13 = 0, NULL, ARRAY(CAST(id % 3 AS STRING), IF(id % 5 = 0, NULL, 'x'))) AS tags,
    IF(id % 17 = 0, NULL, MAP('a', CAST(id % 7 AS INT), 'b', IF(id % 4 = 0, NULL, 1))) AS scores,
    NAMED_STRUCT('b', CAST(id % 9 AS INT), 'a', ARRAY(id, id * 2)) AS info,
    IF(id % 19 = 0, CAST('NaN' AS DOUBLE), id / 3.0) AS x"""
FLAT = """id, CAST(id % 997 AS DECIMAL(9, 2)) AS price, IF(id % 11 = 0, NULL, CONCAT('n', CAST(id % 101 AS STRING)))
    AS name, IF(id % 19 = 0, NULL, id / 3.0) AS x"""


def table(spark, n, columns=NESTED):
    return spark.range(n).selectExpr(*[c.strip() for c in _split(columns)])


def _split(columns):
    """Top-level commas of a select list."""
    out, depth, cur = [], 0, ""
    for ch in columns:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return out + [cur]


def changed_copy(left, k):
    """left with k rows changed: about k/2 modified (name), k/4 deleted, k/4 inserted (new ids) and, when k >= 4, the
    last row twice more."""
    modified, deleted, inserted = k - 2 * (k // 4), k // 4, k // 4
    n = int(left.count())
    right = left.where(F.col("id") >= modified + deleted).unionByName(
        left.where(F.col("id") < modified).withColumn("name", F.lit("changed")))
    if inserted:
        right = right.unionByName(left.where(F.col("id") < inserted).withColumn("id", F.col("id") + n + 1000))
    if k >= 4:
        right = right.unionByName(left.where(F.col("id") == n - 1)).unionByName(left.where(F.col("id") == n - 1))
    return right


def digests(df):
    return df.select(F.call_function("logical_hash", *[F.col(f"`{c}`") for c in df.columns]).alias("h"))


def multiset(df):
    """The row digests of df, with their multiplicities."""
    return counted(digests(df))


def counted(hashes):
    return Counter(bytes(r["h"]) for r in hashes.collect())


def except_all_both_ways(left, right):
    """The reference: exceptAll both ways, over row digests (exceptAll cannot compare maps), as the multiset
    differences of each side's digests (what exceptAll computes; in Python: one job per side, no shuffle)."""
    ours, theirs = multiset(left), multiset(right)
    return ours - theirs, theirs - ours


# Every size in a session's default mode (generated code, rows hashed from their bytes); one size in the other modes:
# the Python side is the same in each, and the Scala suite holds every expression to every mode.
KEYLESS_CASES = [("HASH_ROW_BYTES", k) for k in (0, 1, 60, 400)] + [
    (m, 60) for m in ("CODEGEN_ONLY", "NO_CODEGEN") if m in PASS_MODES]


@pytest.mark.parametrize("mode, k", KEYLESS_CASES)
def test_keyless_diff_equals_except_all(spark, in_codegen_mode, mode, k):
    with in_codegen_mode(mode):
        _keyless_diff_equals_except_all(spark, k)


def _keyless_diff_equals_except_all(spark, k):
    left = table(spark, 1500)
    right = changed_copy(left, k).repartition(3)
    with dsha.diff(left, right, column_digests=k != 1) as d:
        expected_left, expected_right = except_all_both_ways(left, right)
        assert bool(d) is (k == 0)
        assert (d.left_rows, d.right_rows) == (left.count(), right.count())
        assert multiset(d.only_left) == expected_left
        assert multiset(d.only_right) == expected_right
        assert (d.only_left_count, d.only_right_count) == (sum(expected_left.values()), sum(expected_right.values()))
        assert d.method == "sketch" and d.distinct_differences == len(expected_left) + len(expected_right)
        assert d.left_digest == dsha.fingerprint(left).digest and d.right_digest == dsha.fingerprint(right).digest
        if k:
            # modified rows change only `name`; inserted/deleted/duplicated rows change every column
            assert d.columns["name"] >= d.columns["price"] and d.columns["name"] > 0
            assert (d.columns["price"] > 0) is (k >= 4)
            assert d.column_digests == ({} if k == 1 else d.column_digests) and d.column_digests.get("name", False) is False
            if k != 1:
                assert d.column_digests["id"] is (k < 4) and set(d.column_digests) == set(left.columns)
            assert d.cells_used <= 2 * d.distinct_differences + 4
        else:
            assert d.only_left.count() == 0 and set(d.columns.values()) == {0}


def test_rows_are_the_rows_of_except_all(spark):
    """Flat columns, where exceptAll can compare rows themselves: the same multisets of rows, duplicates included."""
    left = table(spark, 800, FLAT)
    left = left.unionByName(left.where("id BETWEEN 100 AND 102"))  # rows twice on the left, once on the right
    right = changed_copy(table(spark, 800, FLAT), 40)
    with dsha.diff(left, right) as d:
        for mine, theirs in ((d.only_left, left.exceptAll(right)), (d.only_right, right.exceptAll(left))):
            assert mine.count() == theirs.count()
            assert mine.exceptAll(theirs).count() == 0 and theirs.exceptAll(mine).count() == 0
        assert d.only_left.where("id BETWEEN 100 AND 102").count() == 3  # in excess once each


@pytest.mark.parametrize("cached", [False, True])
def test_excess_of_one_among_copies(spark, cached):
    """Every digest in excess once (the filtered rows are the answer as they are, unless a side holds copies of one:
    then they are deduplicated): rows 10-12 are twice on the left and once on the right, row 50 changed. Cached
    tables take the row-bytes filter and sketch (hashRowBytes), others the generated ones."""
    base = table(spark, 300, FLAT)
    left = base.unionByName(base.where("id BETWEEN 10 AND 12"))
    right = base.withColumn("name", F.when(F.col("id") == 50, F.lit("changed")).otherwise(F.col("name")))
    if cached:
        left, right = left.cache(), right.cache()
    with dsha.diff(left, right) as d:
        assert (d.only_left_count, d.only_right_count, d.distinct_differences) == (4, 1, 5)
        for mine, theirs in ((d.only_left, left.exceptAll(right)), (d.only_right, right.exceptAll(left))):
            assert mine.count() == theirs.count()
            assert mine.exceptAll(theirs).count() == 0 and theirs.exceptAll(mine).count() == 0
        assert d.columns == {"id": 3, "price": 3, "name": 4, "x": 3}  # row 50 differs only in name
    one = right.withColumn("name", F.when(F.col("id") == 7, F.lit("seven")).otherwise(F.col("name")))
    with dsha.diff(right, one) as d:  # no copies: the filtered rows as they are
        assert (d.only_left_count, d.only_right_count) == (1, 1)
        assert d.only_left.collect()[0]["id"] == 7 and d.only_right.collect()[0]["name"] == "seven"
        assert d.columns == {"id": 0, "price": 0, "name": 1, "x": 0}
    if cached:
        left.unpersist()
        right.unpersist()


def test_column_order_and_columns_argument(spark):
    left = table(spark, 300, FLAT)
    right = changed_copy(left, 8)
    reordered = right.select(*reversed(right.columns))
    d = dsha.diff(left, reordered)
    assert d.only_left_count == dsha.diff(left, right).only_left_count and d.only_right.columns == left.columns
    only_price = dsha.diff(left, right.withColumn("name", F.lit("other")), columns=["id", "price"])
    assert bool(only_price) is False and set(only_price.columns) == {"id", "price"}
    same = dsha.diff(left.withColumn("name", F.lit("a")), left.withColumn("name", F.lit("b")), columns=["id", "x"])
    assert bool(same) and same.only_left_count == 0


def test_large_difference_takes_a_second_sketch_pass(spark):
    left = table(spark, 30000, FLAT)
    right = changed_copy(left, 12000)
    with dsha.diff(left, right, cells=3072) as d:
        expected_left, expected_right = except_all_both_ways(left, right)
        assert d.method.startswith("sketch (") and d.sketch_cells > 3072
        assert multiset(d.only_left) == expected_left and multiset(d.only_right) == expected_right


@pytest.mark.skipif(os.environ.get("DSHA_SPARK_MODE") == "connect", reason="once: 100,000 differing rows")
def test_one_hundred_thousand_differences(spark):
    left = table(spark, 120000, FLAT)
    right = changed_copy(left, 100000)
    with dsha.diff(left, right) as d:
        expected_left, expected_right = except_all_both_ways(left, right)
        assert multiset(d.only_left) == expected_left and multiset(d.only_right) == expected_right
        assert d.only_left_count + d.only_right_count == sum(expected_left.values()) + sum(expected_right.values())


def test_beyond_the_budget_falls_back_to_a_join_and_says_so(spark):
    left = table(spark, 2000)
    right = changed_copy(left, 300)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        d = dsha.diff(left, right, cells=12, max_cells=96)
    assert d.method.startswith("join of per-digest counts")
    assert any(issubclass(w.category, DshaWarning) and "max_cells=96" in str(w.message) for w in caught)
    expected_left, expected_right = except_all_both_ways(left, right)
    assert multiset(d.only_left) == expected_left and multiset(d.only_right) == expected_right
    d.unpersist()


def test_keyed_diff_pairs_rows_into_changes(spark):  # the session's default mode: pairing is Python's
    left = table(spark, 500, FLAT)
    right = (changed_copy(left, 40)
             .withColumn("price", F.when(F.col("id") == 30, F.lit(-1).cast("decimal(9,2)")).otherwise(F.col("price"))))
    d = dsha.diff(left, right, key=["id"])
    # The reference: a join of the two tables on the key, every column compared by canonical value.
    value_columns = [c for c in left.columns if c != "id"]
    joined = left.alias("l").join(right.alias("r"), "id")
    expected = set()
    for r in joined.select("id", *[F.col(f"l.{c}").alias(f"l_{c}") for c in value_columns],
                           *[F.col(f"r.{c}").alias(f"r_{c}") for c in value_columns]).collect():
        for c in value_columns:
            lv, rv = r[f"l_{c}"], r[f"r_{c}"]
            if not (lv == rv or (lv != lv and rv != rv)):  # NaN equals NaN canonically
                expected.add((r["id"], c, None if lv is None else str(lv), None if rv is None else str(rv)))
    got = {(r["id"], r["column"], r["left_value"], r["right_value"]) for r in d.changed.collect()}
    assert {(i, c) for i, c, _, _ in got} == {(i, c) for i, c, _, _ in expected}
    assert d.changed_count == len({i for i, _, _, _ in expected})
    assert d.columns["name"] == len([1 for _, c, _, _ in expected if c == "name"]) and d.columns["price"] >= 1
    left_ids = {r["id"] for r in left.select("id").collect()}
    right_ids = {r["id"] for r in right.select("id").collect()}
    assert {r["id"] for r in d.only_left.collect()} == left_ids - right_ids
    assert {r["id"] for r in d.only_right.collect()} - (right_ids - left_ids) == {499}  # the duplicated row
    assert d.duplicate_keys == 0


def test_duplicate_keys_are_reported_not_multiplied(spark):
    left = spark.createDataFrame([(1, "a"), (2, "b"), (3, "c")], "k INT, v STRING")
    right = spark.createDataFrame([(1, "a"), (2, "x"), (2, "y"), (3, "z"), (None, "n")], "k INT, v STRING")
    d = dsha.diff(left, right, key="k")
    assert d.duplicate_keys == 1 and d.changed_count == 1
    assert {(r["k"], r["left_value"], r["right_value"]) for r in d.changed.collect()} == {(3, "c", "z")}
    assert sorted(r["v"] for r in d.only_left.collect()) == ["b"]
    assert sorted(r["v"] for r in d.only_right.collect()) == ["n", "x", "y"]
    assert (d.only_left_count, d.only_right_count) == (1, 3)
    # A null key is a key as any other (paired when once on each side), and the counts are the rows' own.
    left = spark.createDataFrame([(1, "a"), (None, "x"), (2, "b"), (2, "c")], "k INT, v STRING")
    right = spark.createDataFrame([(1, "A"), (None, "y"), (2, "d"), (3, "z")], "k INT, v STRING")
    d = dsha.diff(left, right, key="k")
    assert (d.changed_count, d.duplicate_keys, d.only_left_count, d.only_right_count) == (2, 1, 2, 2)
    assert {(r["k"], r["left_value"], r["right_value"]) for r in d.changed.collect()} == {(1, "a", "A"),
                                                                                          (None, "x", "y")}
    assert (d.only_left.count(), d.only_right.count()) == (2, 2) and d.columns == {"v": 2}


def test_schema_difference_is_a_report(spark):
    left = spark.createDataFrame([(1, "a", 2.0)], "id INT, name STRING, x DOUBLE")
    right = spark.createDataFrame([(1, 5, True)], "id INT, name INT, flag BOOLEAN")
    d = dsha.diff(left, right)
    assert not d and d.method == "schema"
    assert d.schema_difference.added == [("flag", "boolean")]
    assert d.schema_difference.removed == [("x", "double")]
    assert d.schema_difference.retyped == [("name", "string", "int")]
    assert "retyped: name string -> int" in d.explain()


def test_bad_input_names_what_is_wrong(spark):
    left = spark.createDataFrame([(1, "a")], "id INT, name STRING")
    right = spark.createDataFrame([(1, "a")], "ident INT, name STRING")
    with pytest.raises(dsha.DiffError, match="key column id is not on the right"):
        dsha.diff(left, right, key=["id"])
    with pytest.raises(dsha.DiffError, match="no column nope on the left"):
        dsha.diff(left, left, columns=["nope"])
    with pytest.raises(dsha.DiffError, match="cells must be 2"):
        dsha.diff(left, left, cells=1000)


def test_sketch_functions_in_sql(spark):
    row = spark.sql("""
        SELECT dsha_sketch_diff(a.s, b.s) AS d FROM
          (SELECT dsha_sketch(*) AS s FROM VALUES (1, 'x'), (2, 'y'), (2, 'y'), (2, 'y') AS t(id, v)) a,
          (SELECT dsha_sketch(*) AS s FROM VALUES (1, 'x'), (2, 'y'), (3, 'z') AS t(id, v)) b""").first()["d"]
    assert row["decoded"] and (row["left_rows"], row["right_rows"]) == (4, 3)
    counts = sorted(e["count"] for e in row["entries"])
    assert counts == [-1, 2]
    by_digest = {bytes(e["digest"]): e["count"] for e in row["entries"]}
    two_y = spark.sql("SELECT logical_hash(*) FROM VALUES (2, 'y') AS t(id, v)").first()[0]
    assert by_digest[bytes(two_y)] == 2
    assert {c["name"]: c["equal"] for c in row["columns"]} == {"id": False, "v": False}


@pytest.mark.skipif(os.environ.get("DSHA_SPARK_MODE") == "connect", reason="the CLI starts its own embedded Spark")
def test_cli_diff(spark, tmp_path):
    from cli_runner import run_cli

    left = table(spark, 200, FLAT)
    left.write.parquet(str(tmp_path / "a"))
    changed_copy(left, 8).write.parquet(str(tmp_path / "b"))
    out = run_cli("diff", str(tmp_path / "a"), str(tmp_path / "b"), "--json", "--limit", "3", "--key", "id",
                  "--output", str(tmp_path / "out"))
    assert out.returncode == 1, out.stderr
    report = json.loads(out.stdout)
    assert report["equal"] is False and (report["left_rows"], report["right_rows"]) == (200, 202)
    assert (report["only_left"], report["only_right"], report["changed"]) == (2, 4, 4)
    assert report["columns"]["name"] == 4 and len(report["rows"]["changed"]) == 3
    assert report["column_digests_equal"] == {}  # not computed unless asked for
    digests = json.loads(run_cli("diff", str(tmp_path / "a"), str(tmp_path / "b"), "--json", "--column-digests").stdout)
    assert digests["column_digests_equal"] == {"id": False, "price": False, "name": False, "x": False}
    written = spark.read.parquet(str(tmp_path / "out" / "only_right"))
    assert written.count() == 4 and sorted(os.listdir(tmp_path / "out")) == ["changed", "only_left", "only_right"]
    same = run_cli("diff", str(tmp_path / "a"), str(tmp_path / "a"))
    assert same.returncode == 0 and "equal:" in same.stdout, same.stderr
    text = run_cli("diff", str(tmp_path / "a"), str(tmp_path / "b"), "--limit", "2")
    assert text.returncode == 1 and "method: sketch" in text.stderr
    assert "- only left (2 of 6), + only right (2 of " in text.stdout  # the rows as a table (core/diff_table)
    left.withColumn("extra", F.lit(1)).write.parquet(str(tmp_path / "c"))
    schema = run_cli("diff", str(tmp_path / "a"), str(tmp_path / "c"))
    assert schema.returncode == 1 and "added:   extra int" in schema.stdout, schema.stdout + schema.stderr
    missing = run_cli("diff", str(tmp_path / "a"), str(tmp_path / "b"), "--key", "nope")
    assert missing.returncode == 2 and "key column nope is not on the left" in missing.stderr
    again = run_cli("diff", str(tmp_path / "a"), str(tmp_path / "b"), "--output", str(tmp_path / "out"))
    assert again.returncode == 2 and "exists" in again.stderr


@pytest.mark.skipif(MODE != "classic", reason="the physical plan is not visible to a Spark Connect client")
def test_the_sketch_pass_keeps_its_sketches_out_of_task_binaries(spark, monkeypatch):
    """Spark 4.2+ merges both sides' sketch aggregates over one source (the right is the left filtered) into scalar
    subqueries whose megabytes then travel inside every task of the next stage (spark/session.py SUBPLAN_MERGING:
    18 MiB task binaries at the default cells). The sketch pass turns that rule off for its own query, and only there:
    the session's own excluded rules are as before."""
    from dsha.spark.session import EXCLUDED_RULES
    from pyspark.version import __version__

    left = spark.range(0, 300, 1, 3).selectExpr("id", "id % 7 AS g")
    right = left.filter("id != 5")
    plans = []
    first = type(left).first
    monkeypatch.setattr(type(left), "first", lambda df: plans.append(df._jdf.queryExecution().executedPlan().toString())
                        or first(df))
    with session_settings(spark, {EXCLUDED_RULES: "com.example.NoSuchRule"}):
        d = dsha.diff(left, right)
        assert spark.conf.get(EXCLUDED_RULES) == "com.example.NoSuchRule"
    assert (d.only_left_count, d.only_right_count) == (1, 0)
    sketch_pass = [p for p in plans if "dsha_sketch(" in p]
    assert len(sketch_pass) == 1 and "Subquery" not in sketch_pass[0], plans
    # what the setting prevents, where Spark does it: the same union of the two sketches, planned with Spark's rules
    union = (left.selectExpr("dsha_sketch(*) AS s", "0 AS i").unionByName(right.selectExpr("dsha_sketch(*) AS s", "1 AS i"))
             .selectExpr("max(IF(i = 0, s, NULL)) AS s"))
    merges = tuple(int(p) for p in __version__.split(".")[:2]) >= (4, 2)
    assert ("Subquery" in union._jdf.queryExecution().executedPlan().toString()) == merges


def test_a_sketch_of_many_partitions_merged_as_a_tree_is_the_flat_sketch(spark, monkeypatch):
    """Issue #35 item 6: past spark/tree.py's bound each side's sketches are merged as a tree (groups of at most
    FAN_IN partitions, then their merges) instead of all in one task; merging is associative and commutative, so the
    sketch's bytes are the flat aggregate's, and so the diff. 70 partitions of 5 rows, 96 cells (small, fast)."""
    from dsha.core.algorithms import ALGORITHMS
    from dsha.spark import diff as spark_diff, tree
    from dsha.spark.digests import state_bytes

    left = spark.range(0, 350, 1, 70).selectExpr("id", "CAST(id % 7 AS STRING) AS s")
    right = left.filter("id NOT IN (5, 300)").union(spark.range(1).selectExpr("id + 5000 AS id", "'x' AS s"))
    empty = spark.range(0).selectExpr("id", "CAST(id % 7 AS STRING) AS s")
    assert tree.task_count(left, 48 * 96) == (70 if MODE == "classic" else None)  # the plan's 70 splits; unseen on Connect
    # States of dsha-v1 and the keyed algorithms take a tree only past tree.MOST_TASKS: their input's plan is not
    # read; dsha-secure-v1's 4 KiB states may take one, so it is.
    sizes = {a.id: state_bytes(a.id) for a in ALGORITHMS}
    assert [a for a, size in sizes.items() if tree.task_count(left, size) is None] == (
        ["dsha-v1", "dsha-keyed-v1", "dsha-keyed-v2"] if MODE == "classic" else list(sizes))
    with session_settings(spark, {"spark.dsha.sketch.cells": "96"}), tree.shuffle_for(spark, 70, 1, 8):
        flat = [bytes(d.selectExpr("dsha_sketch(*) AS s").first()["s"]) for d in (left, empty)]
        monkeypatch.setattr(tree, "TREE_BYTES", 0)  # a tree at any size past FAN_IN partitions
        # two levels (9 groups of 8 partitions, then 2) and, over no rows, the sketch of none
        assert [bytes(tree.merged(d, "dsha_sketch(*)", "dsha_sketch_merge", 70, 1, 8).first()["s"])
                for d in (left, empty)] == flat
    used = []
    monkeypatch.setattr(spark_diff, "task_count", lambda df, size: 70)  # as classic reads it from the plan, on Connect too
    monkeypatch.setattr(spark_diff, "merged", lambda *a, **k: used.append(a[3]) or tree.merged(*a, **k))
    d = dsha.diff(left, right, cells=96)
    assert used == [70, 70] and (d.only_left_count, d.only_right_count) == (2, 1)
    assert sorted(r.id for r in d.only_left.collect()) == [5, 300] and [r.id for r in d.only_right.collect()] == [5000]
