"""The orchestrator recipes under examples/: the Airflow gate against the real `dsha check`, and each
orchestrator's own code when that orchestrator is installed (they are not dependencies of dsha)."""
import importlib.util
import os
import subprocess
import sys

import pytest

from conftest import MODE, child_env

pytestmark = pytest.mark.skipif(MODE == "connect", reason="the recipes start their own classic Spark")

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def _load(relative, name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(EXAMPLES, relative))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_airflow_gate_follows_dsha_check(spark, tmp_path, monkeypatch):
    """Never recorded: run. Recorded: skip. A bad store: the task fails (it neither skips nor runs)."""
    gate = _load("airflow/dsha_gate.py", "dsha_gate")
    for k in list(os.environ):
        if k.startswith(("SPARK_REMOTE", "SPARK_CONNECT", "SPARK_LOCAL_")) or k == "PYSPARK_SUBMIT_ARGS":
            monkeypatch.delenv(k)
    monkeypatch.setenv("SPARK_TESTING", "1")
    data, store = str(tmp_path / "orders"), str(tmp_path / "store")
    spark.range(100).selectExpr("id", "id % 3 AS k").write.parquet(data)
    extra = ["--master", "local[1]", "--conf", "spark.ui.enabled=false"]
    assert gate.inputs_changed("report", [data], store, extra) is True
    done = subprocess.run(gate.record_command("report", [data], store, extra), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert gate.inputs_changed("report", [data], store, extra) is False
    (tmp_path / "not-a-store").write_text("x")
    with pytest.raises(RuntimeError, match="exit 2"):
        gate.inputs_changed("report", [data], str(tmp_path / "not-a-store"), extra)


def test_airflow_dag_wires_gate_step_and_record():
    pytest.importorskip("airflow", reason="apache-airflow is not installed (not a dependency of dsha)")
    dag = _load("airflow/daily_report_dag.py", "daily_report_dag").dag
    assert {t.task_id for t in dag.tasks} == {"inputs_changed", "build_report", "record"}
    assert dag.get_task("inputs_changed").downstream_task_ids == {"build_report"}
    assert dag.get_task("build_report").downstream_task_ids == {"record"}
    assert "dsha record daily_report" in dag.get_task("record").bash_command.replace("-m dsha", "dsha")


def test_dagster_data_version_is_the_digest(tmp_path):
    """In a child process (its own Spark): the observed data version is the dsha digest, the same for a rewrite of
    the same rows in another layout, another after a change of content."""
    pytest.importorskip("dagster", reason="dagster is not installed (not a dependency of dsha)")
    script = os.path.join(EXAMPLES, "dagster", "check_data_version.py")
    done = subprocess.run([sys.executable, script, str(tmp_path)], capture_output=True, text=True, timeout=600,
                          env=child_env(DAGSTER_HOME=str(tmp_path / "dagster_home")))
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-5000:]
    assert "data versions: same layout-only, changed content" in done.stdout
