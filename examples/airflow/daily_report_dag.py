"""Airflow: run `daily_report` only when its inputs changed since its last successful run.

    inputs_changed (ShortCircuitOperator: dsha check) >> build_report >> record (dsha record)

`record` runs only after `build_report` succeeded, so a failed run is retried next time. Works with Airflow 2.x and
3.x (the operators moved to the standard provider in 3.0). The inputs, the store and the step's command are read from
the environment when the DAG is parsed (tests/orchestrators/test_examples.py runs this DAG on local files that way);
`dsha` starts an embedded Spark (local[*]) unless DSHA_MASTER names another master.
"""
from __future__ import annotations

import os
import shlex
import sys
from datetime import datetime

from airflow import DAG

try:  # Airflow 3
    from airflow.providers.standard.operators.bash import BashOperator
    from airflow.providers.standard.operators.python import ShortCircuitOperator
except ImportError:  # Airflow 2
    from airflow.operators.bash import BashOperator
    from airflow.operators.python import ShortCircuitOperator

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dsha_gate import inputs_changed, record_command  # noqa: E402

STEP = "daily_report"
INPUTS = shlex.split(os.environ.get("DAILY_REPORT_INPUTS", "/data/orders table:sales.customers"))
STORE = os.environ.get("DSHA_STORE", "/data/dsha-store")
REPORT = os.environ.get("DAILY_REPORT_COMMAND", "spark-submit /jobs/daily_report.py")

with DAG(dag_id=STEP, start_date=datetime(2026, 1, 1), schedule="@daily", catchup=False) as dag:
    gate = ShortCircuitOperator(task_id="inputs_changed", python_callable=inputs_changed,
                                op_kwargs={"step": STEP, "inputs": INPUTS, "store": STORE})
    build = BashOperator(task_id="build_report", bash_command=REPORT)
    record = BashOperator(task_id="record", bash_command=shlex.join(record_command(STEP, INPUTS, STORE)))
    gate >> build >> record
