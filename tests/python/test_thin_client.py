"""dsha from a thin client (pyspark-client: no JVM, no Spark jars) against real servers that have no dsha jar:
Apache Spark's own Spark Connect server, started by the test plan from the line's pyspark without the jar
(dev/connect-server, DSHA_CONNECT_SERVER), and Sail (pysail, a Connect server with no JVM, started here). The client is
the environment of `dev/python-env client` with the dsha wheel and its [client] extra (DSHA_CLIENT_ENV); it runs
tests/python/thin_client.py once for both servers. What it gets is compared with what the jar computes in this
suite's classic session for the same rows: fingerprints of every exact type and of random nested tables, equal and
its reason, states merged with the jar's, changed against a record written by the jar, the tamper-evident
fingerprints (dsha-secure-v1 and -v2, dsha-keyed-v1 and -v2), dsha.diff with and without key=, dsha's SQL functions without
the jar (dsha.jarfree.register_sql, digest_sql), and the one DshaWarning that announces the path.

dev/run's smoke step of Spark 4.1.4 sets both variables (and runs this file once); elsewhere it is skipped."""
import dataclasses
import json
import os
import pickle
import random
import subprocess

import pytest

from conftest import MODE, child_env
from spark_conf import connect_server_listens

SERVER, CLIENT = os.environ.get("DSHA_CONNECT_SERVER"), os.environ.get("DSHA_CLIENT_ENV")
pytestmark = pytest.mark.skipif(MODE == "connect", reason="the expected digests come from the classic session")
if not (SERVER and CLIENT):
    pytest.skip("needs DSHA_CONNECT_SERVER (a Spark Connect server without the jar: dev/connect-server) and "
                "DSHA_CLIENT_ENV (dev/python-env client); dev/run's smoke step of Spark 4.1.4 sets both",
                allow_module_level=True)
pysail = pytest.importorskip("pysail.spark")
pytest.importorskip("pyarrow")
import dsha  # noqa: E402
from test_arrow_agreement import _schema, _value  # noqa: E402  (the suite's random nested tables)
from test_jarfree import EVERY_TYPE  # noqa: E402  (every type the jar-free path hashes exactly)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SERVERS = ("spark", "sail")
RANDOM_TABLES = 8
KEY = bytes(range(1, 33))  # a test key, in the job file: the key-leak test checks where keys go
TAMPER_EVIDENT = (("secure", {"algorithm": "secure"}), ("secure-v2", {"algorithm": "secure-v2"}),
                  ("keyed", {"key": KEY}),
                  ("keyed-v2", {"key": KEY, "algorithm": "keyed-v2"}))


@pytest.fixture(scope="module")
def tables(spark):
    """name -> (Spark schema, rows): every exact type (EVERY_TYPE's rows, as collected) and random nested tables."""
    every = spark.sql(EVERY_TYPE)
    found = {"every_type": (every.schema, [tuple(r) for r in every.collect()])}
    for i in range(RANDOM_TABLES):
        rnd = random.Random(7100 + i)
        schema = _schema(rnd)
        found[f"random_{i}"] = (schema, [tuple(_value(rnd, f.dataType) for f in schema.fields)
                                         for _ in range(rnd.randint(0, 40))])
    return found


def _jar_fingerprints(spark, tables):
    """The jar's fingerprints of the same rows, in this suite's classic session."""
    found = {name: dsha.fingerprint(spark.createDataFrame(rows, schema), engine="jvm")
             for name, (schema, rows) in tables.items()}
    assert found["every_type"] == dsha.fingerprint(spark.sql(EVERY_TYPE), engine="jvm")  # the rows made the trip
    return found


@pytest.fixture(scope="module")
def sail():
    """Sail in this process: the Python of its UDFs (mapInArrow) is this interpreter's, which has dsha."""
    server = pysail.SparkConnectServer()
    server.start()
    _, port = server.listening_address
    yield f"sc://localhost:{port}"
    server.stop()


def _wait_for_the_server(url, seconds=240):
    """dev/connect-server returns before the server listens (its start overlaps the tests before this one)."""
    if not connect_server_listens(url, seconds):
        pytest.fail(f"the Spark Connect server {url} did not listen within {seconds} s (its log: the "
                    f"directory dev/connect-server printed, logs/)")


@pytest.fixture(scope="module")
def answers(spark, tables, sail, tmp_path_factory):
    """The thin client's answers (one run for both servers; the store it checks was recorded here, by the jar) and
    the jar's fingerprints of the same rows, computed here while the client runs."""
    work = tmp_path_factory.mktemp("thin-client")
    with open(work / "tables.pickle", "wb") as f:
        pickle.dump(tables, f)
    schema, rows = tables["every_type"]
    dsha.record({"t": spark.createDataFrame(rows, schema)}, store=str(work / "store"), name="step", create_store=True)
    job = {"servers": {"spark": SERVER, "sail": sail}, "tables": str(work / "tables.pickle"),
           "store": str(work / "store"), "key": KEY.hex()}
    (work / "job.json").write_text(json.dumps(job))
    _wait_for_the_server(SERVER)
    env = child_env()
    env.pop("PYTHONPATH", None)  # dsha as the client's environment has it installed (the wheel), not this checkout
    with open(work / "out", "w+") as out, open(work / "err", "w+") as err:
        child = subprocess.Popen([os.path.join(CLIENT, "bin", "python"), os.path.join(HERE, "thin_client.py"),
                                  str(work / "job.json")], stdout=out, stderr=err, text=True, cwd=work, env=env)
        try:
            jar = _jar_fingerprints(spark, tables)
            child.wait(timeout=600)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        out.seek(0)
        err.seek(0)
        printed, errors = out.read(), err.read()
    assert child.returncode == 0, printed[-3000:] + errors[-5000:]
    found = json.loads(printed.splitlines()[-1])
    print("thin client, seconds per server:", {k: v.get("seconds") for k, v in found["servers"].items()})
    return found, jar


@pytest.fixture(scope="module")
def client(answers):
    return answers[0]


@pytest.fixture(scope="module")
def expected(answers):
    return answers[1]


def _answers(client, server):
    got = client["servers"][server]
    assert "error" not in got, f"{server}:\n{got.get('error')}"
    return got


def test_the_client_has_no_jvm_and_no_spark_jars(client):
    env = client["environment"]
    assert env["pyspark_client"].startswith("4.1.") and env["pyspark_installed"] == []  # pyspark-client alone
    assert not env["jars"] and not env["py4j"] and client["children"] == []
    assert not env["dsha"].startswith(os.path.join(ROOT, "python") + os.sep), env["dsha"]  # the installed wheel
    extra = [r.split(">")[0].split("<")[0] for r in env["client_extra"]]  # dsha's [client] extra, as installed
    assert extra == ["cryptography", "numpy", "pyarrow", "pyspark-client"]


@pytest.mark.parametrize("server", SERVERS)
def test_fingerprints_equal_the_jars(client, expected, server):
    got = _answers(client, server)["fingerprints"]
    assert sorted(got) == sorted(expected)
    for name, fingerprint in expected.items():
        assert got[name] == dataclasses.asdict(fingerprint), name


@pytest.mark.parametrize("server", SERVERS)
def test_equal_state_merge_and_changed(spark, tables, client, server):
    got = _answers(client, server)
    assert got["equal"] == [[True, None], [False, "content"]]
    schema, rows = tables["every_type"]
    whole = dsha.state(spark.createDataFrame(rows, schema), engine="jvm")
    assert dsha.merge([bytes.fromhex(s) for s in got["states"]]) == whole  # the client's halves, merged: the jar's
    assert dsha.merge([bytes.fromhex(got["states"][0]), dsha.state(
        spark.createDataFrame(rows, schema).where("id % 2 = 1"), engine="jvm")]) == whole  # with the jar's half
    assert got["unchanged"] is False and got["changed"] == ["row count"]  # against the jar's record


@pytest.mark.parametrize("server", SERVERS)
def test_the_logical_hash_column_equals_the_jars_row_by_row(spark, tables, client, server):
    from dsha.functions import logical_hash

    schema, rows = tables["every_type"]
    df = spark.createDataFrame(rows, schema)
    jar = {str(r["id"]): bytes(r["digest"]).hex() for r in df.select("id", logical_hash(*df.columns).alias("digest"))
           .collect()}
    assert _answers(client, server)["logical_hash"] == jar and len(jar) == 40


@pytest.mark.parametrize("server", SERVERS)
def test_sql_functions_without_the_jar_equal_the_jars(spark, tables, client, expected, server):
    """dsha.jarfree.register_sql on the server: dsha_py_logical_hash(struct(*)) row by row and digest_sql's table
    digest (of the rows and of none) equal the jar's logical_hash and dsha."""
    from dsha.functions import logical_hash

    got = _answers(client, server)["sql"]
    assert "error" not in got, f"{server}:\n{got.get('error')}"
    schema, rows = tables["every_type"]
    df = spark.createDataFrame(rows, schema)
    jar = {str(r["id"]): bytes(r["digest"]).hex() for r in df.select("id", logical_hash(*df.columns).alias("digest"))
           .collect()}
    assert got["registered"] == ["dsha_py_logical_hash", "dsha_py_schema_digest"]
    assert got["logical_hash"] == jar and got["digest"] == expected["every_type"].digest
    assert got["empty"] == dsha.fingerprint(df.where("id < 0"), engine="jvm").digest


@pytest.fixture(scope="module")
def jar_tamper_evident(spark, tables):
    schema, rows = tables["every_type"]
    df = spark.createDataFrame(rows, schema)
    return {name: dataclasses.asdict(dsha.fingerprint(df, engine="jvm", **kwargs)) for name, kwargs in TAMPER_EVIDENT}


@pytest.mark.parametrize("server", SERVERS)
def test_tamper_evident_fingerprints_equal_the_jars(jar_tamper_evident, client, server):
    assert _answers(client, server)["tamper_evident"] == jar_tamper_evident


@pytest.fixture(scope="module")
def jar_diffs(spark, tables):
    """The jar's diffs of the rows the client diffs (thin_client._diff, here through the jar), as JSON reads back."""
    from pyspark.sql import functions as F
    from thin_client import _diff

    schema, rows = tables["every_type"]
    whole = spark.createDataFrame(rows, schema)
    other = whole.withColumn("i", F.when(F.col("id") == 7, 70).otherwise(F.col("i"))).where("id <> 3")
    return json.loads(json.dumps({"rows": _diff(whole, other, None), "by_key": _diff(whole, other, "id")}))


@pytest.mark.parametrize("server", SERVERS)
def test_diff_with_and_without_key_equals_the_jars(jar_diffs, client, server):
    got = _answers(client, server)["diff"]
    assert got == jar_diffs
    assert got["rows"]["only_left_ids"] == [3, 7] and got["rows"]["only_right_ids"] == [7]
    assert got["by_key"]["changed_rows"] == [[7, "i", "7", "70"]] and got["by_key"]["only_left_ids"] == [3]


# Why the path was taken, as the warning says it: Spark's catalog answers that dsha's functions are missing; Sail
# 0.7.2's cannot say (its catalog refuses functionExists: "not supported: function exists").
WHY = {"spark": "this session has no dsha functions", "sail": "this session cannot say whether it has dsha functions"}


@pytest.mark.parametrize("server", SERVERS)
def test_one_warning_announces_the_path_and_the_jar_is_missing(client, server):
    got = _answers(client, server)
    assert len(got["warnings"]) == 1, got["warnings"]
    assert WHY[server] in got["warnings"][0] and "computed by Python on the executors" in got["warnings"][0]
    assert got["jvm"] == "not loaded"  # engine="jvm": the jar is missing, said as such (on Sail too)
