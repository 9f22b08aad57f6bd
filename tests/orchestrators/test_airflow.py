"""dsha.airflow for real (Airflow 3.3 from PyPI, dag.test(): its executor and SQLite metadata database): the example
DAG of docs/integrations.md runs, skips when its input did not change (also after a rewrite of the same rows), and
runs again when it did; the check's other modes, the sensor, and a check on Spark through an Airflow connection.
Digests are checked against the reference implementation (tests/reference) or Spark."""
import json
from datetime import UTC, datetime

import pytest
from examples_data import load_example, reference_digest, shown_verbatim, write_orders

pytestmark = pytest.mark.usefixtures("airflow_home")  # Airflow's settings made before any test imports airflow


def run(dag, day):
    """One dag.test() run: the run's state and each task's."""
    dag_run = dag.test(logical_date=datetime(2026, 3, day, tzinfo=UTC))
    states = {ti.task_id: str(getattr(ti.state, "value", ti.state)) for ti in dag_run.get_task_instances()}
    return str(getattr(dag_run.state, "value", dag_run.state)), states


def latest_record(store, step):
    """The step's latest record, read back from the store's files (not through dsha)."""
    [folder] = [p for p in store.iterdir() if p.name.startswith(step)]
    return json.loads(max(folder.glob("*.json")).read_text())


@pytest.fixture
def daily_report(airflow_home, tmp_path, monkeypatch):
    """examples/airflow/daily_report_dag.py on local Parquet files (the Arrow engine): its settings from the
    environment, as the DAG reads them when parsed. The step appends to report.log."""
    data, store, log = tmp_path / "orders", tmp_path / "store", tmp_path / "report.log"
    write_orders(data, 1000)
    monkeypatch.setenv("DAILY_REPORT_INPUTS", str(data))
    monkeypatch.setenv("DSHA_STORE", str(store))
    monkeypatch.setenv("DAILY_REPORT_COMMAND", f"echo built >> {log}")
    return load_example("airflow/daily_report_dag.py").dag, data, store, log


def test_the_documented_dag_is_the_example():
    assert shown_verbatim("airflow/daily_report_dag.py")


def test_airflow_dag_skips_unchanged_inputs_and_runs_after_a_change(daily_report):
    """Run 1 (never recorded): the step and the record run, the record holding the data's digest. Run 2, after a
    rewrite of the same rows in another layout: the check skips the step and the record. Run 3, one more row:
    both run again, and the record holds the new digest."""
    dag, data, store, log = daily_report
    ran = ("success", {"inputs_changed": "success", "build_report": "success", "record": "success"})
    assert run(dag, 1) == ran
    assert log.read_text() == "built\n"
    assert latest_record(store, "daily_report")["inputs"][str(data)]["digest"] == reference_digest(1000)

    write_orders(data, 1000, files=3, reverse=True)
    assert run(dag, 2) == ("success", {"inputs_changed": "success", "build_report": "skipped", "record": "skipped"})
    assert log.read_text() == "built\n", "the step ran although its input did not change"

    write_orders(data, 1001)
    assert run(dag, 3) == ran
    assert log.read_text() == "built\nbuilt\n"
    assert latest_record(store, "daily_report")["inputs"][str(data)]["digest"] == reference_digest(1001)


class TaskInstance:
    """The part of a running task's instance the operators use: XComs, kept in a dict shared by the tasks."""

    def __init__(self, xcoms):
        self.xcoms = xcoms

    def xcom_push(self, key, value):
        self.xcoms[key] = json.loads(json.dumps(value))  # as Airflow stores it: JSON

    def xcom_pull(self, task_ids, key):
        return self.xcoms.get(key)


def execute(operator, xcoms, **context):
    """``operator`` run as Airflow runs it (its templates rendered first), outside a DAG run: the DAG runs are
    test_airflow_dag_skips_unchanged_inputs_and_runs_after_a_change's (dag.test() takes seconds a run)."""
    context = {"ti": TaskInstance(xcoms), "params": {}, **context}
    operator.render_template_fields(context)
    return operator.poke(context) if hasattr(operator, "poke") else operator.execute(context)


def test_check_modes_fail_and_xcom(tmp_path):
    """mode="fail": an unchanged input fails the check; mode="xcom": it never fails or skips, and the XCom "dsha"
    says whether the input changed, why, and its digest (inputs templated: rendered before the digest)."""
    from airflow.sdk.exceptions import AirflowFailException

    from dsha.airflow import DshaCheckOperator, DshaRecordOperator

    data, store = tmp_path / "orders", tmp_path / "store"
    write_orders(data, 300)
    xcoms = {}
    check = DshaCheckOperator(task_id="check", step="report", inputs={"orders": "{{ params.orders }}"},
                              store=str(store), mode="xcom")
    record = DshaRecordOperator(task_id="record", check_task_id="check", store=str(store))
    first = execute(check, xcoms, params={"orders": str(data)})
    assert first is None and xcoms["dsha"]["changed"] is True
    assert xcoms["dsha"]["changes"] == ["never recorded: no record of 'report' in the store"]
    assert xcoms["dsha"]["digests"] == {"orders": reference_digest(300)} and xcoms["dsha"]["rows"] == {"orders": 300}
    execute(record, xcoms)
    assert latest_record(store, "report")["inputs"]["orders"]["digest"] == reference_digest(300)
    execute(check, xcoms, params={"orders": str(data)})
    assert (xcoms["dsha"]["changed"], xcoms["dsha"]["changes"]) == (False, [])

    strict = DshaCheckOperator(task_id="check", step="report", inputs={"orders": str(data)}, store=str(store),
                               mode="fail")
    with pytest.raises(AirflowFailException, match="the inputs of 'report' did not change"):
        execute(strict, {})
    write_orders(data, 300, files=1)  # the same rows: still unchanged
    with pytest.raises(AirflowFailException):
        execute(strict, {})
    write_orders(data, 299)
    execute(strict, xcoms)
    assert xcoms["dsha"]["changes"] == ["orders: row count: 300 -> 299 rows"]


def test_check_errors_fail_and_record_needs_a_check(tmp_path):
    """A corrupt store fails the check (never taken as unchanged); a record task without a check's XCom fails."""
    from airflow.sdk.exceptions import AirflowFailException

    import dsha
    from dsha.airflow import DshaCheckOperator, DshaRecordOperator

    data, store = tmp_path / "orders", tmp_path / "store"
    write_orders(data, 10)
    DshaRecordOperator(task_id="r", step="s", inputs=[str(data)], store=str(store)).execute({"ti": None})
    [entry] = [p for p in store.rglob("*.json")]
    entry.write_text("{not json")
    with pytest.raises(dsha.StoreError, match="corrupt dsha store entry"):
        execute(DshaCheckOperator(task_id="c", step="s", inputs=[str(data)], store=str(store)), {})
    with pytest.raises(AirflowFailException, match="task 'check' pushed no fingerprints"):
        execute(DshaRecordOperator(task_id="r", check_task_id="check", store=str(store)), {})
    with pytest.raises(dsha.errors.UsageError, match=r"mode=.never.: one of skip, fail, xcom"):
        DshaCheckOperator(task_id="c", step="s", inputs=[], store=str(store), mode="never")


def test_sensor_waits_for_a_change(tmp_path):
    """The sensor is done at once for a step never recorded; unchanged, it waits (poke: False); after a change,
    done again, and the record after it holds the new digest."""
    from dsha.airflow import DshaChangedSensor, DshaRecordOperator

    data, store = tmp_path / "orders", tmp_path / "store"
    write_orders(data, 200)
    xcoms = {}
    sensor = DshaChangedSensor(task_id="wait", step="wait", inputs=[str(data)], store=str(store), poke_interval=1)
    record = DshaRecordOperator(task_id="record", check_task_id="wait", store=str(store))
    assert execute(sensor, xcoms) is True
    execute(record, xcoms)
    assert execute(sensor, xcoms) is False
    write_orders(data, 201)
    assert execute(sensor, xcoms) is True
    execute(record, xcoms)
    assert latest_record(store, "wait")["inputs"][str(data)]["digest"] == reference_digest(201)
    assert execute(sensor, xcoms) is False


def test_check_on_spark_through_a_connection_agrees_with_the_arrow_record(spark, tmp_path, monkeypatch):
    """conn_id: Spark on the connection's master (its per-file states in the record show it ran). A record the
    Arrow engine wrote is unchanged for Spark's check (the same digest of the same files); a changed input is
    changed for it, and its digest is Spark's of a full read."""
    import dsha
    from dsha.airflow import DshaCheckOperator, spark_master
    from dsha.orchestrators import changes_on

    monkeypatch.setenv("AIRFLOW_CONN_DSHA_SPARK", json.dumps({"conn_type": "spark", "host": "local[1]"}))
    assert spark_master("dsha_spark") == "local[1]"
    data, store, seen = tmp_path / "orders", tmp_path / "store", []
    write_orders(data, 500)
    arrow = changes_on([str(data)], store=str(store), name="spark_step", engine="arrow").record()
    assert arrow.inputs[str(data)].files is None  # the Arrow engine keeps no per-file states
    check = DshaCheckOperator(task_id="check", step="spark_step", inputs=[str(data)], store=str(store),
                              mode="xcom", conn_id="dsha_spark")
    for n in (500, 499):
        write_orders(data, n, files=1 if n == 499 else 2)
        xcoms = {}
        execute(check, xcoms)
        seen.append(xcoms["dsha"])
    records = [json.loads(x["record"])["inputs"][str(data)] for x in seen]
    assert [x["changed"] for x in seen] == [False, True]
    assert [r["digest"] for r in records] == [reference_digest(500),
                                              dsha.fingerprint(spark.read.parquet(str(data))).digest]
    assert all(r["files"] is not None for r in records), "the check did not run on Spark's per-file states"
