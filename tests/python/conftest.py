"""One SparkSession for the Python suite: classic (default) or Spark Connect, per DSHA_SPARK_MODE.

    DSHA_SPARK_MODE=classic|connect  DSHA_JAR=jvm/target/dsha-0.1.0.jar  pytest tests/python
"""
import contextlib
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


def pytest_configure(config):
    # Spark Connect's builder re-applies every builder setting as a runtime setting after the local server started
    # with them, and warns for the static ones (spark.jars, spark.sql.extensions, spark.ui.enabled): harmless.
    config.addinivalue_line("filterwarnings", r"ignore:Failed to set spark\.:UserWarning")


def pytest_report_header(config):
    return f"dsha: Spark mode {MODE}, jar {dsha.jar_path()}"


def child_env(**extra):
    """The environment for a child Python process that starts its own Spark: without this process's Spark Connect
    settings (SPARK_REMOTE, SPARK_CONNECT_*, SPARK_LOCAL_*), and with SPARK_TESTING, so that a local Spark Connect
    server there binds an ephemeral port instead of 15002 (taken by this process's server in Connect mode, or by
    another job on a shared machine)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_REMOTE", "SPARK_CONNECT", "SPARK_LOCAL_"))}
    env["SPARK_TESTING"] = "1"
    env.update(extra)
    return env


@pytest.fixture(scope="session")
def spark():
    if MODE == "connect":
        # A local Spark Connect server binds 15002 unless SPARK_TESTING is set (then an ephemeral port, which the
        # client learns through Py4J): several suites on one machine must not share (or fight over) one server.
        os.environ.setdefault("SPARK_TESTING", "1")
    builder = SparkSession.builder.remote("local[2]") if MODE == "connect" else SparkSession.builder.master("local[2]")
    builder = (dsha.configure(builder)
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.default.parallelism", "2")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.session.timeZone", "UTC"))
    session = builder.getOrCreate()
    yield session
    session.stop()


@contextlib.contextmanager
def codegen(spark, mode):
    """Runs the block with the settings of one codegen mode, then restores the previous values."""
    conf = CODEGEN_MODES[mode]
    previous = {k: spark.conf.get(k, None) for k in conf}
    for k, v in conf.items():
        spark.conf.set(k, v)
    try:
        yield mode
    finally:
        for k, v in previous.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)


@pytest.fixture(params=sorted(CODEGEN_MODES))
def codegen_mode(request, spark):
    """Runs a test once per codegen mode (the settings are runtime SQL settings, in classic and Connect alike)."""
    with codegen(spark, request.param):
        yield request.param


@pytest.fixture(scope="session")
def in_codegen_mode(spark):
    """``with in_codegen_mode("interpreted"): ...`` runs a block in one codegen mode (for tests that compare them)."""
    return lambda mode: codegen(spark, mode)
