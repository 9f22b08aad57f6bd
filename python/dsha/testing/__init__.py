"""Assertions for tests of Spark pipelines (docs/testing.md): ``assert_equal`` (two DataFrames hold the same rows, by
digest; a bounded report of what differs; numeric tolerance) and data snapshots (``assert_snapshot``, the pytest
fixture ``dsha_snapshot`` and option ``--dsha-update-snapshots`` of the plugin ``dsha.testing.plugin``).

``import dsha`` does not import this module; importing it imports no pyspark (the functions do when called).
"""
from dsha.testing.equal import assert_equal
from dsha.testing.snapshot import Snapshot, assert_snapshot, snapshot_of, snapshot_path
from dsha.testing.tolerance import Tolerance

__all__ = ["Snapshot", "Tolerance", "assert_equal", "assert_snapshot", "snapshot_of", "snapshot_path"]
