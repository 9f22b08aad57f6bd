"""dsha.diff on the jar-free path (engine="python": sketches by Python on the executors, decoded on the driver, rows
read back by their digests, issue 31): the same Diff as the jar's (engine="jvm") on the suite's session, and the
differing rows are exceptAll's, both ways, as multisets."""
import os
import random
from collections import Counter

import pytest

pytest.importorskip("pyarrow")
import dsha  # noqa: E402
from dsha.errors import UnsupportedTypeError  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402
from pyspark.sql.types import LongType, MapType, StructField, StructType  # noqa: E402
from test_arrow_agreement import _schema, _value  # noqa: E402  (the random nested tables of the Arrow engine's test)

# What does not depend on the transport runs in the classic pass only (the Connect pass runs the diffs themselves).
CLASSIC_ONLY = pytest.mark.skipif(os.environ.get("DSHA_SPARK_MODE") == "connect", reason="classic pass only")
FIELDS = ("equal", "left_rows", "right_rows", "left_digest", "right_digest", "only_left_count", "only_right_count",
          "method", "sketch_cells", "cells_used", "distinct_differences", "column_digests")


def _has_map(t):
    if isinstance(t, MapType):
        return True
    if isinstance(t, StructType):
        return any(_has_map(f.dataType) for f in t.fields)
    return _has_map(t.elementType) if hasattr(t, "elementType") else False


def _pair(spark, seed, maps, repeated=0):
    """A random nested table and another one: some rows removed, some repeated, some new; the left's first four rows
    ``repeated`` more times on the left."""
    rnd = random.Random(seed)
    schema = _schema(rnd)
    while _has_map(schema) != maps:
        schema = _schema(rnd)
    rows = [tuple(_value(rnd, f.dataType) for f in schema.fields) for _ in range(rnd.randint(150, 300))]
    other = [r for r in rows if rnd.random() > 0.05] + rnd.sample(rows, 6)
    other += [tuple(_value(rnd, f.dataType) for f in schema.fields) for _ in range(rnd.randint(0, 8))]
    rnd.shuffle(other)
    return spark.createDataFrame(rows + rows[:4] * repeated, schema), spark.createDataFrame(other, schema)


def _rows(df):
    """The multiset of a DataFrame's rows, each as its row digest through the jar (one job; NaN and -0.0 as SPEC.md
    §3.2 reads them, maps by their entries)."""
    return Counter(bytes(r[0]) for r in df.select(dsha.functions.logical_hash(*df.columns)).collect())


def _fields(d):
    return {f: getattr(d, f) for f in FIELDS}


@CLASSIC_ONLY
def test_sketches_are_the_jars_bytes(spark):
    """The jar-free sketch of a random nested table (maps, duplicates, several partitions) is dsha_sketch's, byte for
    byte, with column digests."""
    from dsha.jarfree.diff import sketch
    from spark_conf import sql_conf

    left, right = _pair(spark, 21, maps=True, repeated=2)
    df = left.unionByName(right)
    with sql_conf(spark, {"spark.dsha.sketch.cells": "6", "spark.dsha.sketch.columnDigests": "true"}):
        jars = bytes(df.selectExpr("dsha_sketch(*) AS s").first()["s"])
    assert sketch(df, 6, True) == jars


def test_random_table_gives_the_jars_diff_and_except_all(spark):
    """Against the jar (every field, the column digests, the per-column counts) and exceptAll both ways (rows in
    excess several times among them); a first sketch of 4 cells does not decode, a second, larger one does, as
    through the jar."""
    left, right = _pair(spark, 3, maps=False, repeated=3)
    with dsha.diff(left, right, engine="python", column_digests=True, cells=4) as mine, \
            dsha.diff(left, right, engine="jvm", column_digests=True, cells=4) as jars:
        assert _fields(mine) == _fields(jars) and mine.method.startswith("sketch (")  # 2 passes or more
        only_left = _rows(mine.only_left)
        assert only_left == _rows(left.exceptAll(right)) and max(only_left.values()) >= 2
        assert _rows(mine.only_right) == _rows(right.exceptAll(left)) and mine.only_right_count > 0
        assert mine.columns == jars.columns  # per-column counts from the Python row hash of each value


def test_a_difference_beyond_max_cells_takes_the_jars_fallback(spark):
    """Beyond max_cells, the join of per-digest counts (announced, in the jar path's words). Also on Spark Connect,
    where the rows come back from the Python function with their strings typed `string collate UTF8_BINARY`: the
    jar hashed those under another canonical type (another digest for the same values) until SparkShims named it
    `string`, as SPEC.md §2.3 says."""
    left = spark.range(0, 60).selectExpr("id", "CAST(id AS STRING) AS s")
    right = spark.range(30, 100).selectExpr("id", "CAST(id AS STRING) AS s")
    with pytest.warns(dsha.DshaWarning, match="join of per-digest counts"):
        mine = dsha.diff(left, right, cells=4, max_cells=4, engine="python")
    assert mine.method.startswith("join of per-digest counts (the difference, about ") and mine.cells_used is None
    values = lambda df: Counter(tuple(r) for r in df.collect())  # noqa: E731  (flat, exact values)
    assert values(mine.only_left) == values(left.exceptAll(right)) == Counter((i, str(i)) for i in range(30))
    assert values(mine.only_right) == values(right.exceptAll(left))
    assert _rows(mine.only_left) == _rows(left.exceptAll(right)) and _rows(mine.only_right) == _rows(right.exceptAll(left))


def _keyed_pair(spark, seed):
    """A random nested table (no maps: exceptAll refuses them) with a key column ``k``, and another one: a few rows with one
    value changed, some removed, some new, and key 40 twice on the right with other values (ambiguous)."""
    rnd = random.Random(seed)
    schema = _schema(rnd)
    while _has_map(schema) or len(schema.fields) < 2:
        schema = _schema(rnd)
    schema = StructType([StructField("k", LongType(), False), *schema.fields])
    value = lambda i: (i, *[_value(rnd, f.dataType) for f in schema.fields[1:]])  # noqa: E731
    rows = [value(i) for i in range(120)]
    other = [r for r in rows if r[0] % 17 != 5 and r[0] != 40]
    for i in (3, 60, 77, 78):  # one column's value changed (most likely: a random value may be the same)
        other[i] = (other[i][0], _value(rnd, schema.fields[1].dataType), *other[i][2:])
    other += [value(i) for i in (200, 201, 40, 40)]
    return spark.createDataFrame(rows, schema), spark.createDataFrame(other, schema)


def test_diff_by_key_is_the_jars_and_except_all(spark):
    """key=: the jar's Diff (every field, the changed pairs as they print, duplicate keys, per-column counts, the
    unpaired rows' counts); and exceptAll's rows both ways are each side's unpaired rows and the rows of its paired
    keys."""
    left, right = _keyed_pair(spark, 8)
    with dsha.diff(left, right, key="k", engine="python") as mine, dsha.diff(left, right, key="k", engine="jvm") as jars:
        keyed = ("changed_count", "duplicate_keys", "key", "change_names")
        assert {f: getattr(mine, f) for f in FIELDS + keyed} == {f: getattr(jars, f) for f in FIELDS + keyed}
        assert mine.changed_count >= 2 and mine.duplicate_keys == 1 and mine.columns == jars.columns
        changed = Counter(tuple(r) for r in mine.changed.collect())
        assert changed == Counter(tuple(r) for r in jars.changed.collect())
        paired = F.col("k").isin(sorted({r[0] for r in changed}))
        for this, other, only in ((left, right, mine.only_left), (right, left, mine.only_right)):
            assert _rows(this.exceptAll(other)) == _rows(only.unionByName(this.filter(paired)))


def test_equal_tables_and_what_the_jar_free_diff_refuses(spark):
    df = spark.range(5)
    same = dsha.diff(df, df.orderBy(F.desc("id")), engine="python")
    assert same and same.only_left_count == same.only_right_count == 0
    assert same.left_digest == same.right_digest == dsha.fingerprint(df, engine="jvm").digest
    by_key = dsha.diff(df, df, key="id", engine="python")
    assert by_key and by_key.changed is not None and by_key.changed.count() == 0
    interval = spark.sql("SELECT 1 AS id, INTERVAL '3' DAY AS wait")
    with pytest.raises(UnsupportedTypeError, match=r"column wait: interval day"):
        dsha.diff(interval, interval, engine="python")
