"""The orchestrator integrations' tests (dsha.airflow, dsha.dagster, examples/) run in their own environment,
`dev/python-env orchestrators`: pyspark with Airflow and Dagster from PyPI (neither is a dependency of dsha). dev/run
test runs them:

    .venv/orchestrators/bin/python -m pytest -q tests/orchestrators

pyarrow writes the inputs, the Arrow engine digests them; one test asks for the classic local SparkSession.
"""
import json
import logging
import os
import subprocess
import sys

import pytest
from pyspark.sql import SparkSession

import dsha

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLES = os.path.join(ROOT, "examples")
sys.path.insert(0, os.path.join(ROOT, "tests", "reference"))  # dsha_reference: the digests checked against


def pytest_configure(config):
    # Airflow 3.3's in-process task API (dag.test()) imports starlette's test client, which warns about its httpx.
    config.addinivalue_line("filterwarnings", "ignore:Using `httpx` with `starlette.testclient`")


def pytest_report_header(config):
    return f"dsha: jar {dsha.jar_path()}"


@pytest.fixture(scope="session")
def spark():
    session = (dsha.configure(SparkSession.builder.master("local[1]"))
               .config("spark.sql.shuffle.partitions", "1")
               .config("spark.ui.enabled", "false")
               .getOrCreate())
    yield session
    session.stop()
    # Airflow's logging configuration writes to the stream pytest captured: py4j's goodbye at exit would find it closed.
    logging.getLogger("py4j").setLevel(logging.WARNING)


@pytest.fixture(scope="session")
def airflow_home(tmp_path_factory):
    """A throwaway Airflow: its home and SQLite metadata database in a temporary folder (`airflow db migrate`), the
    DAGs folder examples/airflow, no example DAGs, OpenLineage's provider writing its events to openlineage.jsonl
    there (file transport; emitted in a thread of the task, not a forked process). Set before this process imports
    airflow (which reads its settings once); the Airflow tests ask for this fixture first."""
    assert "airflow" not in sys.modules, "airflow was imported before its settings were made"
    home = tmp_path_factory.mktemp("airflow_home")
    settings = {
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
        "AIRFLOW__CORE__DAGS_FOLDER": os.path.join(EXAMPLES, "airflow"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps({"type": "file", "append": True,
                                                       "log_file_path": str(home / "openlineage.jsonl")}),
        "AIRFLOW__OPENLINEAGE__NAMESPACE": "dsha-tests",
        "AIRFLOW__OPENLINEAGE__EXECUTE_IN_THREAD": "True",
    }
    os.environ.update(settings)
    done = subprocess.run([sys.executable, "-m", "airflow", "db", "migrate"], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-5000:]
    return home
