"""dsha.openlineage for real (openlineage-python from PyPI, its file transport; Airflow's OpenLineage provider):
the ``dsha`` dataset facet in emitted events holds the digest that a second computation gives (Spark's
``dsha.fingerprint``, the reference implementation of tests/reference), and validates against the facet's JSON
schema as shipped in the package."""
import json
import os
import uuid
from datetime import UTC, datetime

import dsha_reference
import jsonschema
import pytest
from examples_data import SCHEMA, load_example, reference_digest, shown_verbatim, write_orders
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

import dsha
import dsha.arrow
import dsha.openlineage as ol

# OpenLineage's spec (2-0-2), the two definitions the facet's schema extends, restated for validation without a
# network: a facet has a producer and a schema URL (URIs), and a dataset facet may say it is deleted.
OPENLINEAGE_SPEC = "https://openlineage.io/spec/2-0-2/OpenLineage.json"
BASE_DEFINITIONS = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": OPENLINEAGE_SPEC,
    "$defs": {
        "BaseFacet": {"type": "object",
                      "properties": {"_producer": {"type": "string", "format": "uri"},
                                     "_schemaURL": {"type": "string", "format": "uri"}},
                      "additionalProperties": True, "required": ["_producer", "_schemaURL"]},
        "DatasetFacet": {"allOf": [{"$ref": "#/$defs/BaseFacet"},
                                   {"type": "object", "properties": {"_deleted": {"type": "boolean"}}}],
                         "type": "object"},
    },
}


def validate(facets):
    """A dataset's ``facets`` as emitted, validated against DshaDatasetFacet.json (its ``dsha`` property)."""
    schema = ol.facet_schema()
    registry = Registry().with_resource(OPENLINEAGE_SPEC, Resource.from_contents(BASE_DEFINITIONS, DRAFT202012))
    jsonschema.Draft202012Validator(schema, registry=registry).validate(facets)
    assert facets["dsha"]["_schemaURL"] == schema["$id"] + "#/$defs/DshaDatasetFacet" == ol.SCHEMA_URL


def emitted(path):
    """The events a file transport wrote (one JSON document a line)."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_dsha_facets_of_an_emitted_run_event_hold_the_digest(spark, tmp_path):
    """A RunEvent built by hand, its input digested by the Arrow engine and its output (a Spark DataFrame) by Spark,
    emitted by the OpenLineage client through the file transport: each dataset's dsha facet holds the digest of
    the reference implementation and of dsha.arrow.fingerprint, and validates against the facet's schema."""
    from openlineage.client import OpenLineageClient
    from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
    from openlineage.client.transport.file import FileConfig, FileTransport

    data, log = tmp_path / "orders", tmp_path / "events.jsonl"
    write_orders(data, 400)
    copy = spark.read.parquet(str(data))
    event = RunEvent(eventType=RunState.COMPLETE, eventTime=datetime.now(UTC).isoformat(),
                     run=Run(runId=str(uuid.uuid4())), job=Job(namespace="dsha-tests", name="copy_orders"),
                     inputs=[InputDataset(namespace="file", name=str(data))],
                     outputs=[OutputDataset(namespace="warehouse", name="orders_copy")])
    event = ol.attach(event, {str(data): str(data), ("warehouse", "orders_copy"): copy})
    OpenLineageClient(transport=FileTransport(FileConfig(log_file_path=str(log), append=True))).emit(event)

    [sent] = emitted(log)
    expected = dsha.arrow.fingerprint(str(data))
    assert expected.digest == reference_digest(400)
    for dataset in (*sent["inputs"], *sent["outputs"]):  # the input's by the Arrow engine, the output's by Spark
        validate(dataset["facets"])
        assert {k: v for k, v in dataset["facets"]["dsha"].items() if not k.startswith("_")} == {
            "algorithm": "dsha-v1", "digest": expected.digest, "rowCount": 400, "exact": True,
            "schemaDigest": expected.schema_digest, "dshaVersion": dsha.__version__}
    assert sent["inputs"][0]["facets"]["dsha"]["_producer"] == ol.PRODUCER

    written = dsha.write(copy, str(tmp_path / "written"))  # its fingerprint taken as it wrote: not read again
    named = ol.output_dataset(str(tmp_path / "written"), fingerprint=written)
    assert (named.namespace, named.name, named.facets["dsha"].digest) == ("file", str(tmp_path / "written"),
                                                                          expected.digest)

    with pytest.raises(dsha.errors.UsageError, match="no input or output of the event is named"):
        ol.attach(event, {"/data/ordrs": "/data/ordrs"})  # refused before anything is read
    table = ol.input_dataset(dsha.Table("db.orders"), namespace="hive://metastore:9083", fingerprint=expected)
    assert (table.namespace, table.name) == ("hive://metastore:9083", "db.orders")


def test_dataset_names_follow_openlineage_naming(tmp_path):
    assert ol.dataset_name(str(tmp_path / "t")) == ("file", str(tmp_path / "t"))
    assert ol.dataset_name("file:/data/t") == ("file", "/data/t")
    assert ol.dataset_name("hdfs://nn:8020/data/t") == ("hdfs://nn:8020", "/data/t")
    assert ol.dataset_name("s3a://bucket/data/t") == ("s3a://bucket", "data/t")
    assert ol.dataset_name("table:db.orders") == ("spark_catalog", "db.orders")
    assert ol.dataset_name("table:db.orders", "hive://metastore:9083") == ("hive://metastore:9083", "db.orders")


def test_the_schema_refuses_a_facet_that_breaks_it():
    """The facet's schema is not vacuous: an empty digest, a negative row count, a schema digest that is not
    SHA-256 hex are each refused; the facet as the client serialises it otherwise passes."""
    from openlineage.client.serde import Serde

    good = dict(algorithm="dsha-v1", digest="f81b", rowCount=3, exact=True, schemaDigest="ab" * 32)
    validate({"dsha": json.loads(Serde.to_json(ol.DshaDatasetFacet(**good)))})
    for bad in ({"digest": ""}, {"rowCount": -1}, {"schemaDigest": "xyz"}):
        facet = json.loads(Serde.to_json(ol.DshaDatasetFacet(**{**good, **bad})))
        with pytest.raises(jsonschema.ValidationError):
            validate({"dsha": facet})


def test_airflow_dag_run_emits_dsha_facets(airflow_home, tmp_path, monkeypatch):
    """The documented example DAG (docs/integrations.md) with Airflow's OpenLineage provider writing to a file
    (conftest's airflow_home): the check's COMPLETE event carries its input with the dsha facet of the digest it
    took, in a run that built the report and in one that skipped it (same digest); the record's event likewise."""
    data, store = tmp_path / "orders", tmp_path / "store"
    write_orders(data, 700)
    monkeypatch.setenv("DAILY_REPORT_INPUTS", str(data))
    monkeypatch.setenv("DSHA_STORE", str(store))
    monkeypatch.setenv("DAILY_REPORT_COMMAND", "true")
    dag = load_example("airflow/daily_report_dag.py").dag
    log = airflow_home / "openlineage.jsonl"
    seen = len(emitted(log)) if log.exists() else 0
    runs = []
    for day in (11, 12):
        dag_run = dag.test(logical_date=datetime(2026, 4, day, tzinfo=UTC))
        runs.append({ti.task_id: str(getattr(ti.state, "value", ti.state)) for ti in dag_run.get_task_instances()})
    assert [r["build_report"] for r in runs] == ["success", "skipped"]

    events = [e for e in emitted(log)[seen:] if e["eventType"] == "COMPLETE"
              and e["job"]["name"] in ("daily_report.inputs_changed", "daily_report.record")]
    assert [e["job"]["name"] for e in events] == ["daily_report.inputs_changed", "daily_report.record",
                                                  "daily_report.inputs_changed"]
    for e in events:
        [dataset] = e["inputs"]
        assert (dataset["namespace"], dataset["name"]) == ("file", str(data))
        validate(dataset["facets"])
        assert dataset["facets"]["dsha"]["digest"] == reference_digest(700)
        assert dataset["facets"]["dsha"]["rowCount"] == 700


def test_the_documented_example_is_shown_verbatim():
    assert shown_verbatim("openlineage/keep_orders.py")


def test_the_example_job_emits_the_digests_of_what_it_read_and_wrote(tmp_path, monkeypatch):
    """examples/openlineage/keep_orders.py with the client configured by OPENLINEAGE__ variables (file transport):
    its START event carries the input's digest, its COMPLETE event the input's and the output's, each the
    reference implementation's digest of those rows; a second run over the same rows rewritten in another layout
    reports the same digests."""
    data, kept, log = tmp_path / "orders", tmp_path / "kept", tmp_path / "events.jsonl"
    for name, value in {"ORDERS_PATH": data, "KEPT_ORDERS_PATH": kept, "OPENLINEAGE__TRANSPORT__TYPE": "file",
                        "OPENLINEAGE__TRANSPORT__LOG_FILE_PATH": log, "OPENLINEAGE__TRANSPORT__APPEND": "true"}.items():
        monkeypatch.setenv(name, str(value))
    example = load_example("openlineage/keep_orders.py")
    write_orders(data, 300)
    example.main()
    write_orders(data, 300, files=3, reverse=True)
    example.main()

    kept_rows = [{"id": i, "k": i % 7} for i in range(300) if i % 7 != 0]
    digests = {"orders": reference_digest(300), "kept": dsha_reference.table_digest(SCHEMA, kept_rows)["digest"]}
    events = emitted(log)
    assert [e["eventType"] for e in events] == ["START", "COMPLETE"] * 2
    for e in events:
        datasets = e["inputs"] + e["outputs"]
        assert [(d["namespace"], d["name"]) for d in datasets] == [("file", str(data)), ("file", str(kept))][
            :len(datasets)]
        for d in datasets:
            validate(d["facets"])
        assert [d["facets"]["dsha"]["digest"] for d in datasets] == [digests["orders"], digests["kept"]][
            :len(datasets)]


def test_write_and_record_emit_their_own_events_only_when_a_client_is_configured(spark, tmp_path, monkeypatch):
    """dsha.write and a store's record emit by themselves when openlineage-python is configured (here by
    OPENLINEAGE__TRANSPORT__* variables: the file transport): the written path as the output of job dsha.write, the
    recorded inputs as the inputs of the recorded step, each with the dsha facet of the fingerprint returned or
    recorded, valid against the schema. Without a configuration nothing is emitted; a transport that fails is one
    warning for the process, and every result is the same."""
    from dsha.core import lineage

    for name in [k for k in os.environ if k.startswith("OPENLINEAGE")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)  # no openlineage.yml in the working directory
    monkeypatch.setenv("HOME", str(tmp_path))  # nor in ~/.openlineage
    monkeypatch.setattr(lineage, "_warned", [])  # a warning of an earlier test would hide this one's
    log = tmp_path / "events.jsonl"
    df = spark.range(50).selectExpr("id", "id % 3 AS k")

    quiet = dsha.write(df, str(tmp_path / "quiet"))
    dsha.record({"quiet": str(tmp_path / "quiet")}, store=str(tmp_path / "store"), name="quiet_step")
    assert not log.exists() and not lineage.configured()

    for name, value in {"TYPE": "file", "LOG_FILE_PATH": log, "APPEND": "true"}.items():
        monkeypatch.setenv(f"OPENLINEAGE__TRANSPORT__{name}", str(value))
    monkeypatch.setenv("OPENLINEAGE_NAMESPACE", "nightly")
    out = tmp_path / "out"
    written = dsha.write(df, str(out))
    recorded = dsha.record({"out": str(out), "frame": df}, store=str(tmp_path / "store"), name="daily_report")
    write_event, record_event = emitted(log)
    assert [(e["eventType"], e["job"]["namespace"], e["job"]["name"]) for e in (write_event, record_event)] == [
        ("COMPLETE", "nightly", "dsha.write"), ("COMPLETE", "nightly", "daily_report")]
    assert write_event["inputs"] == [] and record_event["outputs"] == []
    datasets = [*write_event["outputs"], *record_event["inputs"]]
    assert [(d["namespace"], d["name"]) for d in datasets] == [("file", str(out)), ("dsha", "frame"),
                                                               ("file", str(out))]
    for d in datasets:
        validate(d["facets"])
    assert [(d["facets"]["dsha"]["digest"], d["facets"]["dsha"]["rowCount"]) for d in datasets] == [
        (written.digest, 50), (recorded.inputs["frame"].fingerprint.digest, 50),
        (recorded.inputs["out"].fingerprint.digest, 50)]
    assert written.digest == quiet.digest == recorded.inputs["out"].fingerprint.digest

    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__LOG_FILE_PATH", str(tmp_path / "missing" / "events.jsonl"))
    with pytest.warns(dsha.DshaWarning) as caught:
        again = dsha.write(df, str(tmp_path / "again"))
        dsha.write(df, str(tmp_path / "again2"))
    messages = [str(w.message) for w in caught if issubclass(w.category, dsha.DshaWarning)]
    assert len(messages) == 1 and messages[0].startswith(
        f"dsha could not emit the OpenLineage event of dsha.write to {tmp_path / 'again'} (RuntimeError: ")
    assert again.digest == written.digest and len(emitted(log)) == 2
