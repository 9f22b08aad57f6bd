"""In-process faults (local[2,4]: failed tasks are retried): the digest does not change when tasks fail after they
emitted all their rows or part way through them, on either side of a shuffle, or when AQE splits skewed partitions
and coalesces others."""
import pytest
from pyspark import TaskContext

import harness
from harness import digest_of, mixed

ROWS = 20_000


@pytest.fixture(scope="module")
def table(spark):
    return mixed(spark, ROWS, 6)


@pytest.fixture(scope="module")
def expected(spark, table):
    return digest_of(spark, table)


@pytest.mark.parametrize("where", ["map side", "after a shuffle"])
def test_every_task_fails_once_after_emitting_all_rows(spark, table, expected, where):
    """The failed attempt's partial aggregate has already consumed every row of the partition; only the retry's
    output may count."""
    def fail_first_attempt_after_all_rows(rows):  # defined here: pickled by value for the Python workers
        tc = TaskContext.get()
        yield from rows
        if tc.attemptNumber() == 0:
            raise RuntimeError(f"injected failure: partition {tc.partitionId()}, attempt 0, after its last row")

    df = table if where == "map side" else table.repartition(5)
    flaky = spark.createDataFrame(df.rdd.mapPartitions(fail_first_attempt_after_all_rows), table.schema)
    assert digest_of(spark, flaky) == expected


def test_python_udf_fails_mid_partition_on_first_attempts(spark, table, expected):
    """Tasks of the hashing stage fail inside a plain Python UDF (no Arrow in the workers) on attempt 0, part way
    through their rows (at the 20 ids ending in 999, spread over the 4 partitions), and are retried."""
    from pyspark.sql import functions as F

    @F.udf("bigint", useArrow=False)
    def fail_first_attempt(v):
        if v % 1000 == 999 and TaskContext.get().attemptNumber() == 0:
            raise RuntimeError("injected failure on the first attempt")
        return v

    flaky = table.repartition(4).withColumn("id", fail_first_attempt("id"))
    assert digest_of(spark, flaky) == expected


def test_one_task_fails_three_times(spark, table, expected):
    def third_time_lucky(rows):
        tc = TaskContext.get()
        yield from rows
        if tc.partitionId() == 1 and tc.attemptNumber() < 3:
            raise RuntimeError("injected failure")

    flaky = spark.createDataFrame(table.rdd.mapPartitions(third_time_lucky), table.schema)
    assert digest_of(spark, flaky) == expected


def test_a_task_failing_more_than_max_failures_fails_the_query(spark, table):
    """No digest from a job that lost a partition: the failure surfaces, it is not silently skipped."""
    def always(rows):
        yield from rows
        if TaskContext.get().partitionId() == 0:
            raise RuntimeError("injected permanent failure")

    broken = spark.createDataFrame(table.rdd.mapPartitions(always), table.schema)
    with pytest.raises(Exception, match="injected permanent failure"):
        digest_of(spark, broken)


@pytest.mark.parametrize("aqe,partitions", [("true", 1), ("true", 7), ("true", 200), ("false", 7), ("false", 200)])
def test_aqe_skew_join_and_coalescing(spark, table, expected, aqe, partitions):
    """A skewed join (AQE may split the skewed partition and coalesce the small ones) before hashing."""
    settings = {"spark.sql.adaptive.enabled": aqe, "spark.sql.shuffle.partitions": partitions,
                "spark.sql.autoBroadcastJoinThreshold": -1,
                "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes": "1k",
                "spark.sql.adaptive.skewJoin.skewedPartitionFactor": 1,
                "spark.sql.adaptive.advisoryPartitionSizeInBytes": "4k"}
    with harness.sql_conf(spark, settings):
        skewed_key = table.selectExpr("*", "CASE WHEN id % 10 < 7 THEN 0 ELSE id END AS jk")
        keys = skewed_key.selectExpr("jk").distinct()
        joined = skewed_key.join(keys, "jk").drop("jk")
        assert digest_of(spark, joined) == expected
