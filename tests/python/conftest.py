"""One SparkSession for the Python suite: classic (default) or Spark Connect, per DSHA_SPARK_MODE.

    DSHA_SPARK_MODE=classic|connect  DSHA_JAR=jvm/target/dsha-0.1.0.jar  pytest tests/python
"""
import os

import pytest
from pyspark.sql import SparkSession

import dsha

MODE = os.environ.get("DSHA_SPARK_MODE", "classic")

# Generated code (whole-stage and expression codegen) versus the interpreted path (no codegen at all).
CODEGEN_MODES = {
    "codegen": {"spark.sql.codegen.factoryMode": "CODEGEN_ONLY", "spark.sql.codegen.wholeStage": "true"},
    "interpreted": {"spark.sql.codegen.factoryMode": "NO_CODEGEN", "spark.sql.codegen.wholeStage": "false"},
}


def pytest_report_header(config):
    return f"dsha: Spark mode {MODE}, jar {dsha.jar_path()}"


@pytest.fixture(scope="session")
def spark():
    builder = SparkSession.builder.remote("local[2]") if MODE == "connect" else SparkSession.builder.master("local[2]")
    builder = (dsha.configure(builder)
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.default.parallelism", "4")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.session.timeZone", "UTC"))
    session = builder.getOrCreate()
    yield session
    session.stop()


@pytest.fixture(params=sorted(CODEGEN_MODES))
def codegen_mode(request, spark):
    """Runs a test once per codegen mode (the settings are runtime SQL settings, in classic and Connect alike)."""
    conf = CODEGEN_MODES[request.param]
    previous = {k: spark.conf.get(k, None) for k in conf}
    for k, v in conf.items():
        spark.conf.set(k, v)
    yield request.param
    for k, v in previous.items():
        if v is None:
            spark.conf.unset(k)
        else:
            spark.conf.set(k, v)
