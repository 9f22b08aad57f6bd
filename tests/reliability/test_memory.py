"""Memory: the aggregation state is constant per task (a HashAggregate with fixed-width buffers, whole-stage
generated, no object or sort aggregate, one partial row per partition, no spill; or dsha's row-bytes partial step,
which keeps three longs per digest and also emits one row per partition), and 50M rows hash in local[2] with a 1 GB
driver heap."""
import re

import pytest

import harness
from harness import mixed


def explain(spark, query):
    return spark.sql(f"EXPLAIN FORMATTED {query}").first()[0]


@pytest.mark.parametrize("query", [
    "SELECT dsha(*) FROM t",
    "SELECT dsha_fingerprint(*) FROM t",
    "SELECT i, dsha(*) FROM t GROUP BY i",
    "SELECT dsha(st, m, s) FROM t",
])
def test_plan_is_a_codegen_hash_aggregate(spark, query):
    mixed(spark, 100, 2).createOrReplaceTempView("t")
    with harness.sql_conf(spark, {"spark.sql.adaptive.enabled": "false"}):  # the final plan, codegen stages marked
        plan = explain(spark, query)
        simple = spark.sql(f"EXPLAIN {query}").first()[0]
    assert "HashAggregate" in plan, plan
    assert "ObjectHashAggregate" not in plan and "SortAggregate" not in plan, plan
    # every HashAggregate sits inside a whole-stage codegen stage: "* HashAggregate (n)" / "*(k) HashAggregate"
    lines = [line for line in simple.splitlines() if "HashAggregate" in line]
    assert lines and all(re.search(r"\*\(\d+\) HashAggregate", line) for line in lines), simple


def _nodes(plan):
    yield plan
    children = plan.children()
    for i in range(children.size()):
        yield from _nodes(children.apply(i))


def test_partial_aggregate_emits_one_row_per_partition(spark):
    partitions = 8
    df = spark.range(0, 400_000, 1, partitions).selectExpr(*harness.MIXED_COLUMNS).where("id % 5 != 0 OR id < 50")
    with harness.sql_conf(spark, {"spark.sql.adaptive.enabled": "false"}):
        df.createOrReplaceTempView("t_partial")
        q = spark.sql("SELECT dsha(*) FROM t_partial")
        q.collect()
        plan = q._jdf.queryExecution().executedPlan()
        partial = [n for n in _nodes(plan)
                   if n.simpleString(1000).startswith("HashAggregate(keys=[], functions=[partial_dsha(")]
        assert len(partial) == 1, plan.toString()
        metrics = partial[0].metrics()
        assert metrics.apply("numOutputRows").value() == partitions
        assert metrics.apply("spillSize").value() == 0


def test_row_bytes_step_emits_one_row_per_partition(spark):
    partitions = 8
    df = spark.range(0, 400_000, 1, partitions).selectExpr("id", "CAST(id AS STRING) AS s", "id / 7 AS d").cache()
    try:
        with harness.sql_conf(spark, {"spark.sql.adaptive.enabled": "false"}):
            q = df.selectExpr("dsha(*)")
            q.collect()
            plan = q._jdf.queryExecution().executedPlan()
            steps = [n for n in _nodes(plan) if n.simpleString(1000).startswith("PartialDsha [partial_dsha(id, s, d)]")]
            assert len(steps) == 1, plan.toString()
            assert "HashAggregate(keys=[], functions=[partial_dsha(" not in plan.toString()
            metrics = steps[0].metrics()
            assert metrics.apply("numOutputRows").value() == partitions
            assert metrics.apply("rowsHashed").value() == 400_000
    finally:
        df.unpersist()


@pytest.mark.slow
def test_50m_rows_in_a_1g_driver(tmp_path):
    rows = 50_000_000
    done = harness.spark_submit(tmp_path, "local[2]", harness.HERE / "jobs" / "big_job.py", [rows],
                                conf={"spark.driver.memory": "1g"}, timeout=900)
    values = harness.job_result(done)
    assert values["DSHA_ROWS"] == str(rows)
    assert values["DSHA_HEAP_MAX_MB"] and int(values["DSHA_HEAP_MAX_MB"]) <= 1024
