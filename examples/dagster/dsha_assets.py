"""Dagster: dsha digests as data versions (dsha.dagster), so that Dagster marks an asset stale only when the data
it read changed, not when a file was merely rewritten.

    raw_orders (observed: another system writes it) -> orders (written here) -> order_counts

The paths are read from the environment (tests/orchestrators/test_dagster.py runs these assets on local Parquet
files that way); local Parquet files are digested by the Arrow engine, without a JVM.
"""
from __future__ import annotations

import os

import dagster as dg
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

import dsha.dagster

RAW = os.environ.get("RAW_ORDERS", "/data/raw/orders")
ORDERS = os.environ.get("ORDERS_PATH", "/data/orders")
COUNTS = os.environ.get("ORDER_COUNTS_PATH", "/data/order_counts")

raw_orders = dsha.dagster.observable_source(RAW, name="raw_orders")


@dg.asset(deps=[raw_orders])
def orders() -> dg.MaterializeResult:
    table = ds.dataset(RAW, format="parquet").to_table()
    os.makedirs(ORDERS, exist_ok=True)
    pq.write_table(table.filter(pc.field("k") != 0), os.path.join(ORDERS, "orders.parquet"))
    return dsha.dagster.written(ORDERS)


@dg.asset(deps=[orders])
def order_counts() -> dg.MaterializeResult:
    counts = ds.dataset(ORDERS, format="parquet").to_table().group_by("k").aggregate([("id", "count")])
    os.makedirs(COUNTS, exist_ok=True)
    pq.write_table(counts, os.path.join(COUNTS, "counts.parquet"))
    return dsha.dagster.written(COUNTS)


defs = dg.Definitions(assets=[raw_orders, orders, order_counts])
