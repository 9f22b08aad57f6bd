"""OpenLineage: a job that reports which version of its input it read and of its output it wrote, as dsha digests
in the `dsha` dataset facet (dsha.openlineage).

    orders (read) -> keep_orders -> kept_orders (written)

The client is configured as every OpenLineage client is: openlineage.yml, or OPENLINEAGE__TRANSPORT__* variables
(tests/orchestrators/test_openlineage.py runs this file with the file transport, the paths from the environment).
Local Parquet files are digested by the Arrow engine (no JVM); tables and other file systems by Spark.
"""
from __future__ import annotations

import os
import uuid
from datetime import datetime, timezone

import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import Job, OutputDataset, Run, RunEvent, RunState

import dsha.openlineage

ORDERS = os.environ.get("ORDERS_PATH", "/data/orders")
KEPT = os.environ.get("KEPT_ORDERS_PATH", "/data/kept_orders")
JOB = Job(namespace="reports", name="keep_orders")


def event(state: RunState, run: Run, **datasets) -> RunEvent:
    return RunEvent(eventType=state, eventTime=datetime.now(timezone.utc).isoformat(), run=run, job=JOB, **datasets)


def main() -> None:
    client = OpenLineageClient()
    run = Run(runId=str(uuid.uuid4()))
    orders = dsha.openlineage.input_dataset(ORDERS)  # the input's digest, before the job reads it
    client.emit(event(RunState.START, run, inputs=[orders]))

    table = ds.dataset(ORDERS, format="parquet").to_table()
    os.makedirs(KEPT, exist_ok=True)
    pq.write_table(table.filter(pc.field("k") != 0), os.path.join(KEPT, "part-0.parquet"))

    kept = OutputDataset(*dsha.openlineage.dataset_name(KEPT))  # named as OpenLineage names a path
    complete = event(RunState.COMPLETE, run, inputs=[orders], outputs=[kept])
    client.emit(dsha.openlineage.attach(complete, {kept.name: KEPT}))  # the output's digest, after the write


if __name__ == "__main__":
    main()
