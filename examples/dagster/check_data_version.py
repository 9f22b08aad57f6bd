"""Runs dsha_assets.py's source asset through Dagster's observation three times and prints what it saw:
`python check_data_version.py WORKDIR` (tests/orchestrators/test_examples.py runs it)."""
from __future__ import annotations

import os
import sys

work = sys.argv[1]
os.environ["ORDERS_PATH"] = orders_path = os.path.join(work, "orders")
os.environ["DSHA_STATE"] = os.path.join(work, "orders.dsha.json")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import dagster as dg  # noqa: E402

import dsha_assets  # noqa: E402

try:
    observe = dg.observe  # public in some releases
except AttributeError:
    from dagster._core.definitions.observe import observe  # Dagster 1.13: not re-exported


def data_version(instance) -> str:
    result = observe([dsha_assets.orders], instance=instance)
    [event] = result.get_asset_observation_events()
    return event.asset_observation_data.asset_observation.tags["dagster/data_version"]


spark = dsha_assets.spark_session()
rows = spark.range(0, 1000).selectExpr("id", "id % 7 AS k")
rows.repartition(4).write.parquet(orders_path)
with dg.DagsterInstance.ephemeral() as instance:
    first = data_version(instance)
    rows.orderBy("k").coalesce(1).write.mode("overwrite").parquet(orders_path)  # the same rows, another layout
    second = data_version(instance)
    spark.range(0, 1001).selectExpr("id", "id % 7 AS k").write.mode("overwrite").parquet(orders_path)
    third = data_version(instance)
expected = dsha_assets.dsha.fingerprint(spark.read.parquet(orders_path)).digest
print(first, second, third, sep="\n")
assert first == second, "a layout-only rewrite changed the data version"
assert third != second and third == expected, "a change of content did not change the data version to its digest"
print("data versions: same layout-only, changed content")
