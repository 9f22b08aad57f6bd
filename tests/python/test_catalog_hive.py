"""Catalog tables in a Hive metastore as inputs of the store (`dsha.Table`, `table:NAME` in `dsha check/record`).

Hive support is chosen when the SparkContext starts (spark.sql.catalogImplementation=hive), and the suite's shared
``spark`` fixture owns this process's context; an embedded Derby metastore also admits one JVM at a time. So
``test_hive_catalog`` runs this file again in a child pytest process (DSHA_HIVE_CHILD=1, a Derby metastore and a
warehouse under DSHA_HIVE_DIR), which creates the tables and tests the Python API and the CLI in-process on its Hive
session; once it has exited, the CLI runs on the same metastore as a separate process, given Hive support with
``--conf`` (the options of hive_conf), and in-process on the suite's session, which has no Hive catalog.
"""
import glob
import json
import os
import shutil
import subprocess
import sys

import pytest

import dsha
from spark_conf import SUITE_SESSION  # tests/spark_conf.py, on sys.path by conftest

CHILD = os.environ.get("DSHA_HIVE_CHILD") == "1"
MODE = os.environ.get("DSHA_SPARK_MODE", "classic")


def hive_conf(base):
    """The Spark settings of a Hive catalog with an embedded Derby metastore and a warehouse under ``base``."""
    return {"spark.sql.catalogImplementation": "hive",
            "spark.sql.warehouse.dir": os.path.join(base, "warehouse"),
            "spark.hadoop.javax.jdo.option.ConnectionURL":
                f"jdbc:derby:;databaseName={os.path.join(base, 'metastore_db')};create=true",
            "spark.driver.extraJavaOptions": f"-Dderby.system.home={base}"}


def _hive_available():
    try:
        import pyspark
    except ImportError:
        return False
    jars = os.path.join(os.path.dirname(pyspark.__file__), "jars")
    return bool(glob.glob(os.path.join(jars, "spark-hive_*.jar")))


def _cli(args, env, cwd):
    # cwd: Derby writes derby.log, and Spark may create spark-warehouse/, in the working directory
    return subprocess.run([sys.executable, "-m", "dsha", *args], env=env, capture_output=True, text=True, timeout=600,
                          cwd=cwd)


@pytest.mark.skipif(CHILD, reason="the child runs the tests themselves")
@pytest.mark.skipif(MODE == "connect", reason="a classic session of its own (Hive support is set at start)")
def test_hive_catalog(spark, tmp_path):
    if not _hive_available():
        pytest.skip("this pyspark has no spark-hive jar")
    from conftest import child_env

    base = str(tmp_path)
    env = child_env(DSHA_HIVE_CHILD="1", DSHA_HIVE_DIR=base, DSHA_SPARK_MODE="classic")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__],
                       env=env, capture_output=True, text=True, timeout=900, cwd=base)
    assert r.returncode == 0, r.stdout[-20000:] + r.stderr[-5000:]

    # The CLI as a process on the metastore the child left (db.t, recorded by the child's CLI in the store
    # cli-store, then given a new data file), Hive support through --conf: the change is seen.
    conf = [a for k, v in hive_conf(base).items() if k != "spark.driver.extraJavaOptions"
            for a in ("--conf", f"{k}={v}")]
    store = os.path.join(base, "cli-store")
    r = _cli(["check", "report", "table:db.t", "--store", store, *conf], child_env(), base)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "table:db.t: row count" in r.stdout
    # Without Hive support (the suite's session) the table is unknown: an error (exit 2), never "unchanged".
    from cli_runner import run_cli

    r = run_cli("check", "report", "table:db.t", "--store", store)
    assert r.returncode == 2, r.stdout + r.stderr


child = pytest.mark.skipif(not CHILD, reason="runs in the child (DSHA_HIVE_CHILD=1)")


@pytest.fixture(scope="module")
def hspark():
    from pyspark.sql import SparkSession

    builder = (SparkSession.builder.master("local[2]")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.default.parallelism", "2")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.session.timeZone", "UTC"))
    for k, v in SUITE_SESSION.items():
        builder = builder.config(k, v)
    for k, v in hive_conf(os.environ["DSHA_HIVE_DIR"]).items():
        builder = builder.config(k, v)
    session = dsha.configure(builder.enableHiveSupport()).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    assert session.conf.get("spark.sql.catalogImplementation") == "hive"
    yield session
    session.stop()


@child
def test_store_with_metastore_tables(hspark, tmp_path):
    spark = hspark
    spark.sql("CREATE DATABASE IF NOT EXISTS db")
    spark.sql("CREATE TABLE db.t USING parquet AS SELECT id, cast(id % 7 AS int) AS v FROM range(100)")
    spark.sql("CREATE TABLE db.h (id bigint, s string) STORED AS PARQUET")  # a Hive-format table
    spark.sql("INSERT INTO db.h VALUES (1, 'a'), (2, NULL)")
    assert spark.sql("DESCRIBE TABLE EXTENDED db.t").where("col_name = 'Provider'").first()[1] == "parquet"
    store = str(tmp_path / "store")
    inputs = {"t": dsha.Table("db.t"), "h": dsha.Table("db.h")}

    assert dsha.changed(inputs, store=store, name="step", spark=spark)  # never recorded
    dsha.record(inputs, store=store, name="step", spark=spark)
    assert not dsha.changed(inputs, store=store, name="step", spark=spark)
    # the same rows rewritten in another layout: unchanged
    spark.sql("INSERT OVERWRITE TABLE db.h SELECT * FROM (SELECT 2 AS id, CAST(NULL AS string) AS s "
              "UNION ALL SELECT 1, 'a')")
    assert not dsha.changed(inputs, store=store, name="step", spark=spark)

    spark.sql("INSERT INTO db.h VALUES (3, 'c')")
    changes = dsha.changed(inputs, store=store, name="step", spark=spark)
    assert [(c.input, c.what) for c in changes] == [("h", "row count")]
    assert changes.current.inputs["h"].fingerprint == dsha.fingerprint(spark.table("db.h"))
    changes.record()
    assert not dsha.changed(inputs, store=store, name="step", spark=spark)

    # the list form the CLI uses: "table:NAME" names the input
    dsha.record(["table:db.t"], store=store, name="cli-form", spark=spark)
    spark.sql("INSERT INTO db.t VALUES (1000, 1)")
    changes = dsha.changed(["table:db.t"], store=store, name="cli-form", spark=spark)
    assert [(c.input, c.what) for c in changes] == [("table:db.t", "row count")]
    # back to the recorded rows (a Parquet table has no DELETE: overwrite it): unchanged again
    spark.sql("INSERT OVERWRITE TABLE db.t SELECT id, cast(id % 7 AS int) AS v FROM range(100)")
    assert not dsha.changed(["table:db.t"], store=store, name="cli-form", spark=spark)


@child
def test_cli_in_process_on_the_hive_session(hspark):
    """The CLI on this Hive session (in-process): record, then unchanged; then a new data file in the managed table's
    directory (a copy of one: the same rows twice), which the parent's CLI process must see as a change."""
    from cli_runner import run_cli

    hspark.sql("CREATE DATABASE IF NOT EXISTS db")
    hspark.sql("CREATE TABLE IF NOT EXISTS db.t USING parquet AS SELECT id, cast(id % 7 AS int) AS v FROM range(100)")
    store = os.path.join(os.environ["DSHA_HIVE_DIR"], "cli-store")
    r = run_cli("record", "report", "table:db.t", "--store", store)
    assert r.returncode == 0, r.stdout + r.stderr
    r = run_cli("check", "report", "table:db.t", "--store", store, "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["changed"] is False, r.stdout + r.stderr
    files = sorted(glob.glob(os.path.join(os.environ["DSHA_HIVE_DIR"], "warehouse", "db.db", "t", "part-*")))
    shutil.copy(files[0], files[0].replace("part-", "part-copy-"))
