"""dsha.dagster for real (Dagster 1.13 from PyPI, in process, an ephemeral instance): the example assets of
docs/integrations.md, whose data versions are dsha digests, and Dagster's own staleness resolver over them; the
IO manager wrapper and dsha.dagster.output. Digests are checked against the reference implementation."""
import os

import dagster as dg
import dsha_reference
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from dagster._core.definitions.data_version import StaleStatus
from dagster._core.definitions.observe import observe  # Dagster 1.13: not re-exported
from dagster._utils.test.data_versions import get_stale_status_resolver
from examples_data import (
    SCHEMA,
    load_example,
    reference_digest,
    shown_verbatim,
    write_orders,
)

import dsha.dagster

DATA_VERSION = "dagster/data_version"


def _version(instance, key):
    event = instance.get_latest_materialization_event(dg.AssetKey(key))
    return event.asset_materialization.tags[DATA_VERSION], event.asset_materialization.metadata


def _observed(instance, asset):
    [event] = observe([asset], instance=instance).get_asset_observation_events()
    return event.asset_observation_data.asset_observation.tags[DATA_VERSION]


@pytest.fixture
def example(tmp_path, monkeypatch):
    """examples/dagster/dsha_assets.py on local Parquet files, its paths from the environment."""
    for name, path in (("RAW_ORDERS", "raw"), ("ORDERS_PATH", "orders"), ("ORDER_COUNTS_PATH", "counts")):
        monkeypatch.setenv(name, str(tmp_path / path))
    return load_example("dagster/dsha_assets.py"), tmp_path / "raw"


def test_the_documented_assets_are_the_example():
    assert shown_verbatim("dagster/dsha_assets.py")


def test_unchanged_data_keeps_downstream_fresh_and_a_change_makes_it_stale(example):
    """Run 1 materialises orders and order_counts. The raw files rewritten with the same rows in another layout
    keep raw_orders' observed version; orders materialised again keeps its data version (the digest of the same
    rows), so Dagster's resolver finds order_counts fresh (a Dagster data version from the run would have made it
    stale). New raw content: raw_orders' version moves, orders is stale; materialised, order_counts is stale."""
    assets, raw = example
    everything = [assets.raw_orders, assets.orders, assets.order_counts]
    write_orders(raw, 1000)
    kept = [{"id": i, "k": i % 7} for i in range(1000) if i % 7]

    def status(instance, key):
        return get_stale_status_resolver(instance, everything).get_status(dg.AssetKey(key))

    with dg.DagsterInstance.ephemeral() as instance:
        first_raw = _observed(instance, assets.raw_orders)
        assert first_raw == reference_digest(1000)
        assert dg.materialize(everything, instance=instance, selection=["orders", "order_counts"]).success
        orders_version, meta = _version(instance, "orders")
        assert orders_version == dsha_reference.table_digest(SCHEMA, kept)["digest"]
        assert meta["dsha/rows"].value == len(kept) and meta["dsha/digest"].value == orders_version
        assert status(instance, "order_counts") == StaleStatus.FRESH

        write_orders(raw, 1000, files=3, reverse=True)
        assert _observed(instance, assets.raw_orders) == first_raw
        assert status(instance, "orders") == StaleStatus.FRESH
        assert dg.materialize(everything, instance=instance, selection=["orders"]).success
        assert _version(instance, "orders")[0] == orders_version
        assert len(instance.fetch_materializations(dg.AssetKey("orders"), limit=10).records) == 2
        assert status(instance, "order_counts") == StaleStatus.FRESH, "a rewrite of the same rows made it stale"

        write_orders(raw, 1001)
        assert _observed(instance, assets.raw_orders) == reference_digest(1001)
        assert status(instance, "orders") == StaleStatus.STALE
        assert dg.materialize(everything, instance=instance, selection=["orders"]).success
        assert _version(instance, "orders")[0] != orders_version
        assert status(instance, "order_counts") == StaleStatus.STALE


class ParquetFiles(dg.IOManager):
    """An IO manager that writes each asset's pyarrow Table as one Parquet file."""

    def __init__(self, base):
        self.base = base

    def _path(self, context):
        return os.path.join(self.base, context.asset_key.path[-1] + ".parquet")

    def handle_output(self, context, obj):
        pq.write_table(obj, self._path(context))

    def load_input(self, context):
        return pq.read_table(self._path(context.upstream_output))


def test_io_manager_records_the_digest_and_output_sets_the_data_version(tmp_path):
    """The wrapper writes through the inner IO manager and records the digest of what it wrote as metadata; an
    asset returning dsha.dagster.output(...) gets the digest as its data version, so a re-run with the same rows
    (another order) leaves the asset downstream of it fresh, and other rows make it stale."""
    rows = {"n": 100, "reverse": False}

    def table():
        ids = list(range(rows["n"]))[::-1 if rows["reverse"] else 1]
        return pa.table({"id": pa.array(ids, pa.int64()), "k": pa.array([i % 7 for i in ids], pa.int64())})

    @dg.asset
    def plain() -> pa.Table:
        return table()

    @dg.asset
    def versioned():
        return dsha.dagster.output(table())

    @dg.asset
    def top(versioned: pa.Table) -> pa.Table:
        return versioned.slice(0, 5)

    assets = [plain, versioned, top]
    resources = {"io_manager": dsha.dagster.io_manager(ParquetFiles(str(tmp_path)))}
    with dg.DagsterInstance.ephemeral() as instance:
        assert dg.materialize(assets, instance=instance, resources=resources).success
        version, meta = _version(instance, "versioned")
        assert version == meta["dsha/digest"].value == reference_digest(100)
        assert _version(instance, "plain")[1]["dsha/digest"].value == reference_digest(100)
        assert pq.read_table(str(tmp_path / "plain.parquet")).num_rows == 100
        assert dsha_reference.table_digest(SCHEMA, pq.read_table(str(tmp_path / "top.parquet")).to_pylist())[
            "digest"] == _version(instance, "top")[1]["dsha/digest"].value

        resolver = lambda: get_stale_status_resolver(instance, assets)
        rows["reverse"] = True  # the same rows in another order
        assert dg.materialize(assets, instance=instance, resources=resources, selection=["versioned"]).success
        assert resolver().get_status(dg.AssetKey("top")) == StaleStatus.FRESH
        rows["n"] = 101  # other rows
        assert dg.materialize(assets, instance=instance, resources=resources, selection=["versioned"]).success
        assert _version(instance, "versioned")[0] == reference_digest(101)
        assert resolver().get_status(dg.AssetKey("top")) == StaleStatus.STALE
