"""One SparkSession for the Python suite: classic (default) or Spark Connect, per DSHA_SPARK_MODE.

    DSHA_SPARK_MODE=classic|connect  DSHA_JAR=jvm/target/dsha-0.1.0.jar  pytest tests/python
"""
import os
import sys

import pytest
from pyspark.sql import SparkSession

import dsha

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))  # tests/spark_conf.py
from spark_conf import CODEGEN_MODES, SESSION_DEFAULTS, SUITE_SESSION, codegen  # noqa: E402

MODE = os.environ.get("DSHA_SPARK_MODE", "classic")
# The execution modes a test that runs in several runs in: every one in the classic pass; in the Spark Connect pass
# only a session's default (generated code, rows hashed from their bytes), since the transport changes the Python
# path and not the JVM's execution (the Scala suite holds every expression to every mode, on every build).
PASS_MODES = sorted(CODEGEN_MODES) if MODE == "classic" else ["HASH_ROW_BYTES"]
# Python workers (UDFs, mapInArrow: the jar-free path) run this interpreter, which has dsha and pyarrow, not the
# first python3 on PATH.
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


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
def spark(tmp_path_factory):
    if MODE == "connect":
        # A local Spark Connect server binds 15002 unless SPARK_TESTING is set (then an ephemeral port, which the
        # client learns through Py4J): several suites on one machine must not share (or fight over) one server.
        os.environ.setdefault("SPARK_TESTING", "1")
    builder = SparkSession.builder.remote("local[2]") if MODE == "connect" else SparkSession.builder.master("local[2]")
    builder = (dsha.configure(builder)
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.default.parallelism", "2")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.session.timeZone", "UTC")
               # tables the tests save go to this run's temporary directory, not spark-warehouse/ of the checkout
               .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("warehouse"))))
    for k, v in {**SESSION_DEFAULTS, **SUITE_SESSION}.items():
        builder = builder.config(k, v)
    session = builder.getOrCreate()
    yield session
    session.stop()


@pytest.fixture(params=PASS_MODES)
def codegen_mode(request, spark):
    """Runs a test once per mode of this pass (PASS_MODES; the settings are runtime SQL settings)."""
    with codegen(spark, request.param):
        yield request.param


@pytest.fixture(scope="session")
def in_codegen_mode(spark):
    """``with in_codegen_mode("NO_CODEGEN"): ...`` runs a block in one codegen mode (for tests that compare them)."""
    return lambda mode: codegen(spark, mode)
