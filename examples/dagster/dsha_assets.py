"""Dagster: an observable source asset whose data version is the dsha digest of its files.

Dagster compares data versions to decide whether downstream assets are stale: with the digest as the version, a
rewrite of the same rows (another layout, compaction, a re-run that produced identical output) keeps it, and any
change of content changes it. `dsha.fingerprint_path` reads only files that changed since the last observation when
a state file is given (here, beside Dagster's storage: nothing is written into the data).
"""
from __future__ import annotations

import os

import dagster as dg

import dsha

ORDERS = os.environ.get("ORDERS_PATH", "/data/orders")
STATE = os.environ.get("DSHA_STATE", os.path.join(os.environ.get("DAGSTER_HOME", "/tmp"), "orders.dsha.json"))


def spark_session():
    from pyspark.sql import SparkSession

    return dsha.configure(SparkSession.builder.master(os.environ.get("DSHA_MASTER", "local[2]"))).getOrCreate()


@dg.observable_source_asset
def orders() -> dg.DataVersion:
    r = dsha.fingerprint_path(spark_session(), ORDERS, state=STATE)
    return dg.DataVersion(r.digest)


@dg.asset(deps=[orders])
def order_counts() -> int:
    return spark_session().read.parquet(ORDERS).count()


defs = dg.Definitions(assets=[orders, order_counts])
