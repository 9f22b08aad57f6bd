"""The Python API: configure, functions, fingerprint, equal, and the error when the extension is missing."""
import os
import subprocess
import sys
import textwrap

import pytest
from pyspark.sql import Row
from pyspark.sql import functions as F

import dsha
from dsha.functions import dsha as dsha_agg
from dsha.functions import dsha_fingerprint, logical_hash


def test_configure_keeps_existing_settings():
    from pyspark.sql import SparkSession

    b = SparkSession.builder.config("spark.jars", "/x/other.jar").config("spark.sql.extensions", "a.B")
    dsha.configure(b)
    assert b._options["spark.jars"] == "/x/other.jar," + dsha.jar_path()
    assert b._options["spark.sql.extensions"] == "a.B," + dsha.EXTENSION_CLASS
    dsha.configure(b)  # idempotent
    assert b._options["spark.jars"].count(dsha.jar_path()) == 1


def test_star_and_names(spark, codegen_mode):
    df = spark.createDataFrame([(1, "a"), (2, "b"), (2, "b")], "id INT, name STRING")
    star = df.agg(dsha_agg("*")).first()[0]
    assert star == df.agg(dsha_agg("name", "id")).first()[0] == df.agg(dsha_agg(F.col("id"), F.col("name"))).first()[0]
    assert star == spark.sql("SELECT dsha(*) FROM VALUES (2, 'b'), (1, 'a'), (2, 'b') AS t(id, name)").first()[0]
    assert star.startswith("f81b4f50120") and len(star) == 75
    hashes = [r[0] for r in df.select(logical_hash("*")).collect()]
    assert len(hashes) == 3 and all(len(h) == 16 for h in hashes)
    assert hashes[1] == hashes[2] and hashes[0] != hashes[1]
    renamed = df.select(F.col("id").alias("key"), "name")
    assert renamed.agg(dsha_agg("*")).first()[0] != star


def test_fingerprint_one_job_and_parts(spark):
    df = spark.range(100).select((F.col("id") % 7).alias("k"), F.col("id").cast("string").alias("v"))
    fp = dsha.fingerprint(df)
    assert fp.rows == 100
    assert fp.algorithm == "dsha-v1"
    assert fp.schema == 'struct<"k":bigint,"v":string>'
    assert fp.digest == df.agg(dsha_agg("*")).first()[0]
    assert str(fp) == fp.digest
    assert dsha.fingerprint(df, "v").schema == 'struct<"v":string>'
    grouped = df.groupBy("k").agg(dsha_fingerprint("*").alias("f")).select("k", "f.rows").collect()
    assert sum(r.rows for r in grouped) == 100


def test_equal_and_reasons(spark):
    a = spark.createDataFrame([(1, "x"), (2, "y")], "id INT, v STRING")
    same = spark.createDataFrame([(2, "y"), (1, "x")], "v_ignored INT, v STRING").toDF("id", "v")
    assert dsha.equal(a, same)
    assert dsha.equal(a, same).reason is None
    more = spark.createDataFrame([(1, "x"), (2, "y"), (2, "y")], "id INT, v STRING")
    other_schema = spark.createDataFrame([(1, "x"), (2, "y")], "id BIGINT, v STRING")
    other_content = spark.createDataFrame([(1, "x"), (2, "z")], "id INT, v STRING")
    assert not dsha.equal(a, more) and dsha.equal(a, more).reason == "row count"
    assert not dsha.equal(a, other_schema) and dsha.equal(a, other_schema).reason == "schema"
    assert not dsha.equal(a, other_content) and dsha.equal(a, other_content).reason == "content"
    assert "row counts differ: 2 vs 3" in dsha.equal(a, more).explain()


def test_empty_and_null_rows(spark, codegen_mode):
    empty = spark.createDataFrame([], "a INT, b STRING")
    nulls = spark.createDataFrame([Row(a=None, b=None)], "a INT, b STRING")
    fp_empty, fp_null = dsha.fingerprint(empty), dsha.fingerprint(nulls)
    assert fp_empty.rows == 0 and fp_empty.content_sum == "0" * 32
    assert fp_null.rows == 1 and fp_null.digest != fp_empty.digest
    two_nulls = spark.createDataFrame([Row(a=None, b=None)] * 2, "a INT, b STRING")
    assert dsha.fingerprint(two_nulls).digest not in (fp_null.digest, fp_empty.digest)


def test_functions_need_columns():
    with pytest.raises(ValueError, match="at least one column"):
        dsha_agg()


def test_clear_error_when_extension_is_missing(tmp_path):
    """A session without the extension: dsha.fingerprint says what to configure (in a fresh process)."""
    script = textwrap.dedent("""
        from pyspark.sql import SparkSession
        import dsha
        spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
        try:
            dsha.fingerprint(spark.range(3))
        except dsha.DshaNotLoadedError as e:
            print("NOT LOADED:", e)
    """)
    # A Connect session in this process leaves SPARK_REMOTE/SPARK_CONNECT_* in the environment: not for the child.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_REMOTE", "SPARK_CONNECT", "SPARK_LOCAL_"))}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                         env=dict(env, PYSPARK_SUBMIT_ARGS="pyspark-shell"))
    assert "NOT LOADED: dsha's SQL functions are not loaded" in out.stdout, out.stderr[-2000:]
    assert "dsha.configure" in out.stdout and "spark.sql.extensions=" + dsha.EXTENSION_CLASS in out.stdout


@pytest.mark.skipif(os.environ.get("DSHA_SPARK_MODE") == "connect", reason="register() is for classic sessions")
def test_register_into_running_session(spark):
    dsha.register(spark)  # already loaded: registering again is harmless
    assert spark.sql("SELECT dsha(*) FROM range(3)").first()[0] == dsha.fingerprint(spark.range(3)).digest
