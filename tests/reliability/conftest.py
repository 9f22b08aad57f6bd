"""A local Spark session with dsha for the reliability suite (classic mode; faults need a real scheduler)."""
import pytest
from pyspark.sql import SparkSession

import dsha


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: long tests, run with `dev/run slow`")


@pytest.fixture(scope="session")
def spark():
    # local[2,4]: two cores, and a task may fail up to 4 times (needed for the retry tests).
    session = (dsha.configure(SparkSession.builder.master("local[2,4]"))
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.session.timeZone", "UTC")
               .getOrCreate())
    yield session
    session.stop()
