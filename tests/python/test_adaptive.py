"""dsha under adaptive query execution, Spark's default, which this suite's own sessions turn off (tests/spark_conf.py
SUITE_SESSION, as the Scala suite does): 30-40% of the driver's CPU on small jobs alone, ~6% of a heavy file's time with
both cores busy. What dsha does differently under it is tested here with it on, against the same work with it off
and a second computation:

- the tree's plan reading (spark/tree.py ``task_count``): under adaptive execution a plan with an exchange is an
  ``AdaptiveSparkPlan`` whose last stage's partition count is read without running it; without, it is left flat;
- the jobs of digests, states, ``equal``, key-less and keyed ``diff`` and ``assert_equal`` with tolerance, over inputs
  whose plans hold aggregations and joins (adaptive execution re-plans them stage by stage, coalesces partitions and
  may turn joins into broadcasts), in the classic pass (the JVM's plans and jobs are the same under Spark Connect).
The CLI's own processes, the smoke tests, README's blocks and the reliability suite run with Spark's defaults (on)."""
from collections import Counter

import dsha
import pytest
from conftest import MODE
from dsha.testing import assert_equal
from pyspark.sql import functions as F
from spark_conf import ADAPTIVE_ON, SUITE_SESSION, sql_conf

classic_only = pytest.mark.skipif(MODE != "classic", reason="a Spark Connect client does not see the physical plan")


def on_and_off(spark, work):
    """``work()`` with adaptive execution on, then off: both results."""
    with sql_conf(spark, ADAPTIVE_ON):
        on = work()
    with sql_conf(spark, SUITE_SESSION):
        off = work()
    return on, off


@classic_only
def test_the_tree_reads_the_partition_count_of_an_adaptive_plan(spark):
    from dsha.spark.tree import task_count

    def scan():  # a new DataFrame each time: a DataFrame keeps the physical plan it was first given
        return spark.range(0, 400, 1, 8).selectExpr("id", "id % 7 AS g")

    size = 48 * 96  # a sketch's partial: large enough that the plan is read (tree.MOST_TASKS)
    # with an exchange: the adaptive plan's last stage (12), or flat without adaptive execution (executing the plan
    # could run jobs); without one: the scan's 8 splits either way
    assert on_and_off(spark, lambda: task_count(scan().repartition(12, "id"), size)) == (12, None)
    assert on_and_off(spark, lambda: task_count(scan(), size)) == (8, 8)


@pytest.mark.skipif(MODE != "classic", reason="what adaptive execution changes (the JVM's plans and jobs) is the same "
                                             "under Spark Connect")
def test_answers_are_the_same_with_and_without_adaptive_execution(spark):
    base = spark.range(0, 300, 1, 6).selectExpr("id", "id % 7 AS g", "CAST(id AS DOUBLE) / 3 AS x")
    left = base.join(base.groupBy("g").agg(F.sum("x").alias("t")), "g")  # an aggregation and a join in the plan
    right = (left.withColumn("x", F.when(F.col("id") == 7, F.lit(99.0)).otherwise(F.col("x")))
             .filter("id NOT IN (5, 200)"))
    noisy = left.withColumn("x", F.col("x") + F.lit(1e-9))

    def work():
        fp = dsha.fingerprint(left)
        eq = dsha.equal(left, right)
        d = dsha.diff(left, right)
        keyed = dsha.diff(left, right, key="id")
        assert_equal(noisy, left, tolerance=1e-6)  # within tolerance: passes (pairs rows by the other columns)
        return (fp.digest, fp.rows, bytes(dsha.state(left)), bool(eq), eq.reason,
                sorted(tuple(r) for r in d.only_left.collect()), sorted(tuple(r) for r in d.only_right.collect()),
                d.columns, (keyed.changed_count, keyed.only_left_count, keyed.only_right_count), keyed.columns)

    on, off = on_and_off(spark, work)
    assert on == off
    digest, rows, _, equal, _, only_left, only_right, columns, keyed, keyed_columns = on
    # and right: the digest of the same rows from a plan without exchanges; the rows of exceptAll
    assert (digest, rows) == (dsha.fingerprint(spark.createDataFrame(left.collect(), left.schema)).digest, 300)
    assert not equal
    assert only_left == sorted(tuple(r) for r in left.exceptAll(right).collect()) and len(only_left) == 3
    assert only_right == sorted(tuple(r) for r in right.exceptAll(left).collect()) and len(only_right) == 1
    def lacking(a, b, i):  # values of column i in rows a that rows b lack, as multisets
        return sum((Counter(r[i] for r in a) - Counter(r[i] for r in b)).values())

    assert columns == {c: max(lacking(only_left, only_right, i), lacking(only_right, only_left, i))
                       for i, c in enumerate(left.columns)} == {"g": 2, "id": 2, "x": 3, "t": 2}
    assert keyed == (1, 2, 0) and keyed_columns == {"g": 0, "x": 1, "t": 0}  # id 7's x changed; 5 and 200 left only
