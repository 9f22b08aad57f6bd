"""The Python API: configure, functions, fingerprint, equal, and the error when the extension is missing."""
import os
import subprocess
import sys
import textwrap

import pytest
from pyspark.sql import Row
from pyspark.sql import functions as F

import dsha
from conftest import child_env
from spark_conf import ROW_BYTES, sql_conf
from dsha.functions import dsha as dsha_agg
from dsha.functions import (dsha_fingerprint, dsha_sketch, dsha_sketch_diff, logical_filter_word_in, logical_hash,
                            logical_hash_in)

MODE = os.environ.get("DSHA_SPARK_MODE", "classic")


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
    equal = dsha.equal(a, same)  # a Comparison: computed once, read as a bool and for its parts
    assert equal and equal.reason is None
    more = spark.createDataFrame([(1, "x"), (2, "y"), (2, "y")], "id INT, v STRING")
    other_schema = spark.createDataFrame([(1, "x"), (2, "y")], "id BIGINT, v STRING")
    other_content = spark.createDataFrame([(1, "x"), (2, "z")], "id INT, v STRING")
    more_rows = dsha.equal(a, more)
    assert not more_rows and more_rows.reason == "row count"
    both = dsha.equal(a, other_schema)
    assert not both and both.reason == "schema"
    content = dsha.equal(a, other_content)
    assert not content and content.reason == "content"
    assert "row counts differ: 2 vs 3" in more_rows.explain()
    # Both sides hashed in one query: the same parts as two separate fingerprints, also for a DataFrame and itself.
    assert (both.left, both.right) == (dsha.fingerprint(a), dsha.fingerprint(other_schema))
    itself = dsha.equal(a, a)
    assert itself and itself.left == dsha.fingerprint(a)


@pytest.mark.skipif(MODE == "connect", reason="newSession() is for classic sessions")
def test_equal_across_sessions_hashes_each_side_on_its_own(spark):
    other = spark.newSession()  # the same SparkContext and extensions, another session: no join between the two
    a = spark.createDataFrame([(1, "x"), (2, "y")], "id INT, v STRING")
    b = other.createDataFrame([(2, "y"), (1, "x")], "id INT, v STRING")
    assert dsha.equal(a, b) and dsha.equal(a, b).right == dsha.fingerprint(b)
    assert dsha.equal(a, other.createDataFrame([(1, "x")], "id INT, v STRING")).reason == "row count"


def test_cached_table_hashed_from_row_bytes_gives_the_same_digest(spark):
    df = spark.createDataFrame([(i, f"s{i}" * (i % 5), i / 3, None if i % 4 else b"\x00") for i in range(300)],
                               "id BIGINT, s STRING, x DOUBLE, b BINARY").cache()
    try:
        digests = {}
        for on in ("true", "false"):
            with sql_conf(spark, {ROW_BYTES: on}):
                digests[on] = dsha.fingerprint(df)
                if MODE == "classic":  # the final adaptive plan, once run (Connect clients do not reach it)
                    query = df.agg(dsha_agg("*"))
                    assert query.collect()[0][0] == digests[on].digest
                    plan = query._jdf.queryExecution().executedPlan().toString()
                    assert ("PartialDsha" in plan) == (on == "true"), plan
                    assert ("reads cached batches" in plan) == (on == "true"), plan
        with sql_conf(spark, {ROW_BYTES: "true", "spark.dsha.readCachedBatches": "false"}):
            digests["spark's cache reader"] = dsha.fingerprint(df)
        assert digests["true"] == digests["false"] == digests["spark's cache reader"] and digests["true"].rows == 300
    finally:
        df.unpersist()


def test_rows_picked_by_digest_and_filter_word(spark, codegen_mode):
    df = spark.createDataFrame([(i, f"s{i}", None if i % 3 else i / 7) for i in range(40)], "id INT, s STRING, x DOUBLE")
    # Each row's filter word, as a sketch recovers it: the difference between df's sketch and an empty one's.
    diff = (df.agg(dsha_sketch("*").alias("a"))
            .crossJoin(df.limit(0).agg(dsha_sketch("*").alias("b")))
            .select(dsha_sketch_diff("a", "b").alias("d")).first()["d"])
    assert diff["decoded"] and diff["filters_valid"] and len(diff["entries"]) == 40
    words = {bytes(e["digest"]): e["filter"] for e in diff["entries"]}
    picked = df.filter(F.col("id").isin(5, 6)).select(logical_hash("*")).collect()
    d5, d6 = (bytes(r[0]) for r in picked)
    assert {r.id for r in df.filter(logical_hash_in([d5, d6], "*")).collect()} == {5, 6}
    assert {r.id for r in df.filter(logical_hash_in(d5 + d6, "id", "s", "x")).collect()} == {5, 6}
    both = df.filter(logical_filter_word_in([words[d5]], "*") & logical_hash_in([d5, d6], "*")).collect()
    assert [r.id for r in both] == [5]
    as_bytes = words[d6].to_bytes(4, "little")
    assert 6 in {r.id for r in df.filter(logical_filter_word_in(as_bytes, "*")).collect()}
    other = next(w for w in range(1 << 32) if w not in words.values())
    assert df.filter(logical_filter_word_in([other], "*")).count() == 0
    with pytest.raises(ValueError, match=r"integers in \[0, 2\^32\), not 4294967296"):
        logical_filter_word_in([1 << 32], "*")
    with pytest.raises(ValueError, match="4 bytes each; 5 bytes"):
        logical_filter_word_in(b"12345", "*")
    with pytest.raises(ValueError, match="16 bytes each, not 3"):
        logical_hash_in([b"abc"], "*")


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


def test_clear_error_when_extension_is_missing():
    """A session without the jar and extension (a fresh process, in this suite's mode) that asks for the jar
    (spark.dsha.engine=jvm; without it dsha takes the jar-free path: test_jarfree.py): every entry point says what to
    configure instead of failing with UNRESOLVED_ROUTINE."""
    builder = 'SparkSession.builder.remote("local[1]")' if MODE == "connect" else \
        'SparkSession.builder.master("local[1]")'
    script = textwrap.dedent(f"""
        from pyspark.sql import SparkSession
        import dsha
        from dsha.spark.session import translate_errors
        from dsha.functions import dsha as dsha_agg
        spark = {builder}.config("spark.ui.enabled", "false").config("spark.dsha.engine", "jvm").getOrCreate()

        def sql():
            with translate_errors():
                spark.sql("SELECT dsha(id) FROM range(3)").collect()

        for name, attempt in [("fingerprint", lambda: dsha.fingerprint(spark.range(3))),
                              ("equal", lambda: dsha.equal(spark.range(3), spark.range(3))),
                              ("column", lambda: spark.range(3).agg(dsha_agg("*")).collect()),
                              ("sql", sql),
                              ("register", lambda: dsha.register(spark))]:
            try:
                attempt()
                print(name, "NO ERROR")
            except dsha.DshaNotLoadedError as e:
                print(name, "NOT LOADED:", " ".join(str(e).split()))
            except Exception as e:
                print(name, "OTHER:", type(e).__name__, " ".join(str(e).split())[:300])
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                         env=child_env(PYSPARK_SUBMIT_ARGS="pyspark-shell"))
    lines = {line.split(" ", 1)[0]: line for line in out.stdout.splitlines()}
    assert set(lines) >= {"fingerprint", "equal", "column", "sql", "register"}, out.stdout + out.stderr[-2000:]
    for name in ("fingerprint", "equal", "column", "sql"):
        assert "NOT LOADED: dsha's SQL functions are not loaded" in lines[name], lines[name]
        assert "dsha.configure" in lines[name] and "spark.sql.extensions=" + dsha.EXTENSION_CLASS in lines[name]
    expected = "needs a classic session" if MODE == "connect" else "the dsha jar is not on this session's classpath"
    assert "NOT LOADED: dsha.register() " + expected in lines["register"] or \
        "NOT LOADED: " + expected in lines["register"], lines["register"]


def test_not_loaded_errors_are_recognised():
    from dsha.spark.session import is_not_loaded_error

    assert is_not_loaded_error(Exception("[UNRESOLVED_ROUTINE] Cannot resolve routine `dsha` on search path "
                                         "[`system`.`builtin`, `system`.`session`, `spark_catalog`.`default`]."))
    assert is_not_loaded_error(Exception("[UNRESOLVED_ROUTINE] Cannot resolve routine `dsha_fingerprint` on ..."))
    assert not is_not_loaded_error(Exception("[UNRESOLVED_ROUTINE] Cannot resolve routine `my_udf` on ..."))
    assert not is_not_loaded_error(Exception("[UNRESOLVED_COLUMN] `dsha` cannot be resolved"))


def test_configure_remote_builder():
    from pyspark.sql import SparkSession

    b = SparkSession.builder.remote("local[1]").config("spark.sql.extensions", "a.B")
    assert dsha.configure(b) is b
    assert b._options["spark.sql.extensions"] == "a.B," + dsha.EXTENSION_CLASS
    assert b._options["spark.jars"] == dsha.jar_path()


def test_configure_remote_local_builder_hides_only_the_warnings_for_the_settings_taken_at_start(monkeypatch):
    """A local Connect server starts with spark.jars and spark.sql.extensions; PySpark's setting them again warns as
    if they had failed (4.x: the server's warning; 3.5: Spark's error text). Those are ignored, others are kept."""
    import warnings

    from pyspark.sql import SparkSession

    taken = ['Failed to set spark.jars to Some(/x/dsha.jar) due to [CANNOT_MODIFY_CONFIG] Cannot modify the value of '
             'the Spark config: "spark.jars".',
             'Failed to set spark.sql.extensions to Some(io.dsha.registration.DshaExtensions) due to '
             '[CANNOT_MODIFY_STATIC_CONFIG] Cannot modify the value of the static Spark config: "spark.sql.extensions".',
             '[CANNOT_MODIFY_CONFIG] Cannot modify the value of the Spark config: "spark.jars".\nSee also ...',
             'Cannot modify the value of a static config: spark.sql.extensions.']
    kept = ['Failed to set spark.sql.shuffle.partitions to Some(x) due to [INVALID_CONF_VALUE] ...',
            'Failed to set spark.jarsx to Some(y)']
    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        dsha.configure(SparkSession.builder.master("local[1]"))  # classic: nothing hidden
        warnings.warn(taken[0], UserWarning)
        assert [str(w.message) for w in shown] == taken[:1]
        shown.clear()
        dsha.configure(SparkSession.builder.remote("local[1]"))
        for text in taken + kept:
            warnings.warn(text, UserWarning)
    assert [str(w.message) for w in shown] == kept


def test_jar_path_override(monkeypatch, tmp_path):
    jar = tmp_path / "dsha-9.9.9.jar"
    jar.write_bytes(b"PK")
    monkeypatch.setenv("DSHA_JAR", str(jar))
    assert dsha.jar_path() == str(jar)
    monkeypatch.setenv("DSHA_JAR", str(tmp_path / "missing.jar"))
    with pytest.raises(FileNotFoundError, match="DSHA_JAR"):
        dsha.jar_path()


def test_functions_reject_other_types():
    with pytest.raises(TypeError, match="column names or Columns"):
        dsha_agg(3)


@pytest.mark.skipif(MODE != "connect", reason="Spark Connect sessions only")
def test_register_refuses_connect_sessions(spark):
    with pytest.raises(dsha.DshaNotLoadedError, match="needs a classic session"):
        dsha.register(spark)


@pytest.mark.skipif(MODE == "connect", reason="register() is for classic sessions")
def test_register_into_running_session(spark):
    dsha.register(spark)  # already loaded: registering again is harmless
    assert spark.sql("SELECT dsha(*) FROM range(3)").first()[0] == dsha.fingerprint(spark.range(3)).digest
