"""Airflow: run `daily_report` only when its inputs changed since its last successful run (dsha.airflow).

    inputs_changed (DshaCheckOperator) >> build_report >> record (DshaRecordOperator)

`record` runs only after `build_report` succeeded, so a failed run runs again next time; it records the
fingerprints the check took. The inputs, the store and the step's command are read from the environment when the
DAG is parsed (tests/orchestrators/test_airflow.py runs this DAG on local files that way). Local Parquet files are
digested by the Arrow engine (no JVM); tables, or `conn_id="spark_default"`, use a Spark session.
"""
from __future__ import annotations

import os
import shlex
from datetime import datetime

from airflow.providers.standard.operators.bash import BashOperator
from airflow.sdk import DAG

from dsha.airflow import DshaCheckOperator, DshaRecordOperator

STEP = "daily_report"
INPUTS = shlex.split(os.environ.get("DAILY_REPORT_INPUTS", "/data/orders /data/customers"))
STORE = os.environ.get("DSHA_STORE", "/data/dsha-store")
REPORT = os.environ.get("DAILY_REPORT_COMMAND", "spark-submit /jobs/daily_report.py")

with DAG(dag_id=STEP, start_date=datetime(2026, 1, 1), schedule="@daily", catchup=False) as dag:
    check = DshaCheckOperator(task_id="inputs_changed", step=STEP, inputs=INPUTS, store=STORE)
    build = BashOperator(task_id="build_report", bash_command=REPORT)
    record = DshaRecordOperator(task_id="record", check_task_id="inputs_changed", store=STORE)
    check >> build >> record
