"""dsha's pytest plugin, registered through the ``pytest11`` entry point: the ``--dsha-update-snapshots`` option and
the ``dsha_snapshot`` fixture. Loading it imports neither pyspark nor Spark (only ``import dsha``); a test that does
not ask for the fixture costs nothing more."""
from __future__ import annotations

from typing import Any, Callable

import pytest

__all__ = ["dsha_snapshot", "pytest_addoption"]

OPTION = "--dsha-update-snapshots"


def pytest_addoption(parser: Any) -> None:
    parser.getgroup("dsha").addoption(
        OPTION, action="store_true", default=False, dest="dsha_update_snapshots",
        help="rewrite the dsha data snapshots that differ (dsha_snapshot fixture) instead of failing")


@pytest.fixture
def dsha_snapshot(request: Any) -> Callable[[Any, str], None]:
    """``dsha_snapshot(df, name)``: asserts that ``df`` matches the snapshot ``name`` of this test module, kept in
    ``__dsha_snapshots__/<module>/<name>.json`` beside the test file (written on the first run; rewritten when it
    differs under ``--dsha-update-snapshots``)."""
    from dsha.testing.snapshot import assert_snapshot, snapshot_path

    update = bool(request.config.getoption("dsha_update_snapshots"))
    test_file = str(getattr(request.node, "path", None) or request.node.fspath)

    def check(df: Any, name: str) -> None:
        __tracebackhide__ = True
        assert_snapshot(df, snapshot_path(test_file, name), update=update)

    return check
