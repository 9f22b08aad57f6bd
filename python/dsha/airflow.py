"""Airflow (3.x) operators on dsha's fingerprint store: run a step only when its inputs changed.

    check = DshaCheckOperator(task_id="check", step="report", inputs=["/data/orders"], store="/data/dsha-store")
    check >> build_report >> DshaRecordOperator(task_id="record", check_task_id="check", store="/data/dsha-store")

``DshaCheckOperator`` compares the inputs' digests with the step's last record (``dsha.changed``) and, when nothing
changed, skips everything downstream (``mode="skip"``), fails (``mode="fail"``: new data was expected) or only
reports (``mode="xcom"``). ``DshaRecordOperator`` records the fingerprints the check took, after the step
succeeded, so a failed run runs again next time. ``DshaChangedSensor`` waits until the inputs differ from the
last record. Each pushes what it found as the XCom ``"dsha"``: ``{"step", "changed", "changes", "digests",
"rows", "record"}``.

Inputs are local paths, Hadoop paths, ``"table:NAME"`` (templated, as ``step``, ``store`` and ``version``). The
engine: with ``conn_id`` (an Airflow connection such as ``spark_default``: its host, and port, are the Spark master),
a Spark session on that master; without it, the Arrow engine (no JVM) for local Parquet, ORC or Arrow files, else
a local Spark session (``engine=`` forces one). Install with ``pip install "./python[airflow]"``.

With Airflow's OpenLineage provider configured (and dsha's extra ``openlineage``), each operator's task reports
its inputs as OpenLineage datasets carrying the ``dsha`` facet of the fingerprints it took (``dsha.openlineage``).
"""
from __future__ import annotations

from typing import Any, Dict, Optional

from dsha.dependencies import install_hint
from dsha.errors import MissingDependencyError, UsageError

try:
    from airflow.sdk import BaseHook, BaseOperator, BaseSensorOperator, SkipMixin
    from airflow.sdk.exceptions import AirflowFailException
except ImportError as e:  # none, or Airflow 2 (no airflow.sdk)
    raise MissingDependencyError(f'dsha.airflow needs Airflow 3 ({e}): {install_hint("airflow")}',
                                 name="airflow") from None
from dsha.orchestrators import ENGINES, changes_on, record_taken
from dsha.skip import Changes
from dsha.store import Record

__all__ = ["MODES", "XCOM_KEY", "DshaChangedSensor", "DshaCheckOperator", "DshaRecordOperator", "spark_master",
           "summary"]

XCOM_KEY = "dsha"
MODES = ("skip", "fail", "xcom")
_TEMPLATED = ("step", "inputs", "store", "version")


def spark_master(conn_id: str) -> str:
    """The Spark master of an Airflow connection: its host (``local[*]``, ``yarn``, ``spark://h``), with its port."""
    conn = BaseHook.get_connection(conn_id)
    host = (conn.host or "").strip()
    if not host:
        raise UsageError(f"Airflow connection {conn_id!r} has no host: set it to the Spark master "
                         "(local[*], yarn, spark://HOST, k8s://...)")
    return f"{host}:{conn.port}" if conn.port else host


def summary(changes: Changes) -> Dict[str, Any]:
    """The XCom of a check: whether the step must run, why, and the fingerprints taken (``record``: JSON that
    ``DshaRecordOperator`` records)."""
    inputs = changes.current.inputs
    return {"step": changes.current.name, "changed": bool(changes), "changes": [str(c) for c in changes],
            "digests": {k: i.fingerprint.digest for k, i in inputs.items()},
            "rows": {k: i.fingerprint.rows for k, i in inputs.items()}, "record": changes.current.to_json()}


def _changes(step: str, inputs: Any, store: str, version: Optional[str], engine: str, conn_id: Optional[str]
             ) -> Changes:
    """``dsha.changed`` on the engine asked for; a connection asks for Spark on its master."""
    master = spark_master(conn_id) if conn_id else None
    return changes_on(inputs, store=store, name=step, version=version, master=master,
                      engine="spark" if conn_id and engine == "auto" else engine)


class _Lineage:
    """What Airflow's OpenLineage provider asks an operator after a task succeeded: its inputs as OpenLineage
    datasets with the ``dsha`` facet of the fingerprints the task took (none when it took none). Tables are named
    in ``lineage_table_namespace`` (set it to your lineage backend's, e.g. ``hive://host:port``)."""

    lineage_table_namespace = "spark_catalog"
    _dsha_taken: Optional[Record] = None

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> Any:
        from airflow.providers.openlineage.extractors import OperatorLineage

        from dsha.openlineage import input_datasets

        if self._dsha_taken is None:
            return None
        return OperatorLineage(inputs=input_datasets(self._dsha_taken, self.lineage_table_namespace))


class _Inputs(_Lineage):
    """The settings a check and a sensor share, and the comparison they make."""

    def _settings(self, step: str, inputs: Any, store: str, version: Optional[str], engine: str,
                  conn_id: Optional[str]) -> None:
        if engine not in ENGINES:
            raise UsageError(f"engine={engine!r}: one of {', '.join(ENGINES)}")
        self.step, self.inputs, self.store, self.version = step, inputs, store, version
        self.engine, self.conn_id = engine, conn_id

    def changes(self) -> Changes:
        return _changes(self.step, self.inputs, self.store, self.version, self.engine, self.conn_id)


class DshaCheckOperator(BaseOperator, SkipMixin, _Inputs):
    """Whether step ``step``'s ``inputs`` changed since its last record in ``store``; when they did not,
    ``mode`` says what happens: ``"skip"`` every task downstream (the check succeeds), ``"fail"`` the check fails
    without retries, ``"xcom"`` nothing (downstream tasks read the XCom ``"dsha"``). A never recorded step has
    changed. An error (a corrupt store, a missing input) fails the task: it never passes for unchanged."""

    template_fields = _TEMPLATED
    inherits_from_skipmixin = True

    def __init__(self, *, step: str, inputs: Any, store: str, mode: str = "skip", version: Optional[str] = None,
                 engine: str = "auto", conn_id: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if mode not in MODES:
            raise UsageError(f"DshaCheckOperator mode={mode!r}: one of {', '.join(MODES)}")
        self.mode = mode
        self._settings(step, inputs, store, version, engine, conn_id)

    def execute(self, context: Any) -> None:
        changes = self.changes()
        self._dsha_taken = changes.current
        context["ti"].xcom_push(key=XCOM_KEY, value=summary(changes))
        self.log.info("dsha: %s: %s", self.step, changes.explain())
        if changes or self.mode == "xcom":
            return
        if self.mode == "fail":
            raise AirflowFailException(f"dsha: the inputs of {self.step!r} did not change ({changes.explain()})")
        downstream = [t for t in context["task"].get_flat_relatives(upstream=False) if not t.is_teardown]
        if downstream:
            self.skip(ti=context["ti"], tasks=downstream)


class DshaRecordOperator(BaseOperator, _Lineage):
    """Records a step's fingerprints in ``store``, after the step succeeded: those a ``DshaCheckOperator`` or
    ``DshaChangedSensor`` took (``check_task_id``: an input that changed while the step ran shows as changed next
    time), or, without it, those of ``inputs`` now (as ``dsha record``)."""

    template_fields = (*_TEMPLATED, "check_task_id")

    def __init__(self, *, store: str, check_task_id: Optional[str] = None, step: Optional[str] = None,
                 inputs: Any = None, version: Optional[str] = None, engine: str = "auto",
                 conn_id: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if (check_task_id is None) == (step is None or inputs is None):
            raise UsageError("DshaRecordOperator: give check_task_id=, or step= and inputs= (not both)")
        self.store, self.check_task_id, self.step, self.inputs = store, check_task_id, step, inputs
        self.version, self.engine, self.conn_id = version, engine, conn_id

    def execute(self, context: Any) -> str:
        if self.check_task_id is None:
            assert self.step is not None
            record = _changes(self.step, self.inputs, self.store, self.version, self.engine, self.conn_id).record()
        else:
            taken = context["ti"].xcom_pull(task_ids=self.check_task_id, key=XCOM_KEY)
            if not isinstance(taken, dict) or "record" not in taken:
                raise AirflowFailException(f"dsha: task {self.check_task_id!r} pushed no fingerprints (XCom "
                                           f"{XCOM_KEY!r}): is it a DshaCheckOperator or DshaChangedSensor?")
            master = spark_master(self.conn_id) if self.conn_id else None
            record = record_taken(Record.from_json(taken["record"], f"XCom of task {self.check_task_id!r}"),
                                  self.store, master=master)
        self._dsha_taken = record
        self.log.info("dsha: recorded %s at %s", record.name, record.recorded_at)
        return record.recorded_at


class DshaChangedSensor(BaseSensorOperator, _Inputs):
    """Waits until step ``step``'s ``inputs`` differ from its last record in ``store`` (at once for a step never
    recorded); pushes the XCom ``"dsha"`` as ``DshaCheckOperator`` does, for a ``DshaRecordOperator`` downstream.

    Not deferrable: a digest is a read of the data (a Spark job, or the Arrow engine hashing every file), and a
    trigger runs in the triggerer's one event loop shared by every deferred task, where such a read would block the
    others and a Spark session cannot live. Between pokes, ``mode="reschedule"`` frees the worker slot instead."""

    template_fields = (*BaseSensorOperator.template_fields, *_TEMPLATED)

    def __init__(self, *, step: str, inputs: Any, store: str, version: Optional[str] = None, engine: str = "auto",
                 conn_id: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._settings(step, inputs, store, version, engine, conn_id)

    def poke(self, context: Any) -> bool:
        changes = self.changes()
        self.log.info("dsha: %s: %s", self.step, changes.explain())
        if changes:
            self._dsha_taken = changes.current
            context["ti"].xcom_push(key=XCOM_KEY, value=summary(changes))
        return bool(changes)
