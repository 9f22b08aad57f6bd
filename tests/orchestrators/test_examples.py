"""The orchestrator recipes under examples/, run for real (dev/python-env orchestrators has Airflow and Dagster): the
Airflow gate against the real `dsha check`, the Airflow DAG end to end (`dag.test()`, twice), Dagster's observation."""
import importlib.util
import os
import subprocess
import sys
from datetime import datetime, timezone

import pytest

from conftest import EXAMPLES, child_env


def _load(relative, name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(EXAMPLES, relative))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def child_environ(monkeypatch):
    """This process's environment as child_env() makes it: what the recipes' `dsha` processes inherit."""
    wanted = child_env()
    for k in set(os.environ) - set(wanted):
        monkeypatch.delenv(k)
    for k, v in wanted.items():
        monkeypatch.setenv(k, v)


def test_airflow_gate_follows_dsha_check(tmp_path, child_environ):
    """An error of `dsha check` (exit 2: a bad store, a missing input) fails the gate task: it neither skips nor runs
    the step. (Exit 1 and 0, run and skip, are test_airflow_dag_runs_the_step_only_when_its_inputs_changed.)"""
    gate = _load("airflow/dsha_gate.py", "dsha_gate")
    data = tmp_path / "orders"
    data.mkdir()
    (tmp_path / "not-a-store").write_text("x")
    with pytest.raises(RuntimeError, match="exit 2"):
        gate.inputs_changed("report", [str(data)], str(tmp_path / "not-a-store"))
    with pytest.raises(RuntimeError, match="exit 2"):
        gate.inputs_changed("report", [str(tmp_path / "missing")], str(tmp_path / "store"))


@pytest.fixture
def daily_report(airflow_home, spark, tmp_path, monkeypatch, child_environ):
    """examples/airflow/daily_report_dag.py on local inputs: its settings from the environment, as the DAG reads them
    when parsed (here, and again by dag.test(), which parses the DAGs folder). The step appends to report.log."""
    data, store, log = tmp_path / "orders", tmp_path / "store", tmp_path / "report.log"
    spark.range(1000).selectExpr("id", "id % 7 AS k").repartition(2).write.parquet(str(data))
    monkeypatch.setenv("DAILY_REPORT_INPUTS", str(data))
    monkeypatch.setenv("DSHA_STORE", str(store))
    monkeypatch.setenv("DAILY_REPORT_COMMAND", f"echo built >> {log}")
    return _load("airflow/daily_report_dag.py", "daily_report_dag").dag, store, log


def test_airflow_dag_wires_gate_step_and_record(daily_report):
    dag, store, _ = daily_report
    assert {t.task_id for t in dag.tasks} == {"inputs_changed", "build_report", "record"}
    assert dag.get_task("inputs_changed").downstream_task_ids == {"build_report"}
    assert dag.get_task("build_report").downstream_task_ids == {"record"}
    record = dag.get_task("record").bash_command.replace(f"{sys.executable} -m dsha", "dsha")
    assert record.startswith(f"dsha record daily_report {store.parent / 'orders'} --store {store}"), record


def test_airflow_dag_runs_the_step_only_when_its_inputs_changed(daily_report):
    """Two runs of the DAG (Airflow's own executor of dag.test(), its metadata database): never recorded, the gate lets
    the step and `dsha record` run; then, inputs unchanged, the gate short-circuits both."""
    dag, store, log = daily_report

    def run(day):
        dag_run = dag.test(logical_date=datetime(2026, 3, day, tzinfo=timezone.utc))
        states = {ti.task_id: str(getattr(ti.state, "value", ti.state)) for ti in dag_run.get_task_instances()}
        return str(getattr(dag_run.state, "value", dag_run.state)), states

    assert run(1) == ("success", {"inputs_changed": "success", "build_report": "success", "record": "success"})
    assert log.read_text() == "built\n"
    assert store.is_dir() and any(p.is_file() for p in store.rglob("*")), "dsha record left no record in the store"
    assert run(2) == ("success", {"inputs_changed": "success", "build_report": "skipped", "record": "skipped"})
    assert log.read_text() == "built\n", "the step ran although its inputs did not change"


def test_dagster_data_version_is_the_digest(tmp_path):
    """In a child process (its own Spark): the observed data version is the dsha digest, the same for a rewrite of
    the same rows in another layout, another after a change of content."""
    script = os.path.join(EXAMPLES, "dagster", "check_data_version.py")
    done = subprocess.run([sys.executable, script, str(tmp_path)], capture_output=True, text=True, timeout=600,
                          env=child_env(DAGSTER_HOME=str(tmp_path / "dagster_home")))
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-5000:]
    assert "data versions: same layout-only, changed content" in done.stdout
