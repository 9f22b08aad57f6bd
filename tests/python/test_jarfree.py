"""The jar-free path (dsha.jarfree, issue 31): on a session without dsha's functions, dsha.fingerprint / equal /
state run as Python on the executors (mapInArrow + the Arrow engine) and give the jar's digests, byte for byte;
what it cannot hash exactly is refused with the column's name. Checked here against the jar on the suite's session
(engine="python" beside engine="jvm"), and in a fresh session that has no jar (auto: one warning, same digest)."""
import random
import shutil
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("pyarrow")
import dsha  # noqa: E402
from conftest import MODE, child_env  # noqa: E402
from dsha.errors import UnsupportedTypeError  # noqa: E402
from test_arrow_agreement import _schema, _value  # noqa: E402  (the random nested tables of the Arrow engine's test)

EVERY_TYPE = """
SELECT id,
       CAST(id AS BOOLEAN) AS b, CAST(id - 3 AS TINYINT) AS t, CAST(id * 800 AS SMALLINT) AS s, CAST(id AS INT) AS i,
       CASE id WHEN 0 THEN CAST('NaN' AS FLOAT) WHEN 1 THEN CAST(-0.0 AS FLOAT) ELSE CAST(id / 7 AS FLOAT) END AS f,
       CASE id WHEN 2 THEN CAST('-Infinity' AS DOUBLE) WHEN 3 THEN -0.0D ELSE id / 3 END AS d,
       CAST(id * 1234567.891 AS DECIMAL(38, 10)) AS dec38, CAST(id / 4 AS DECIMAL(5, 2)) AS dec5,
       IF(id % 4 = 0, NULL, concat('é名', CAST(id AS STRING), '\U0001F600')) AS str, CAST(CAST(id AS STRING) AS BINARY) AS bin,
       date_add(DATE'1583-01-01', CAST(id * 9973 AS INT)) AS dt,
       timestamp_micros(id * 86400000123 - 20000000000000000) AS ts,
       CAST(timestamp_micros(id * 3600000001) AS TIMESTAMP_NTZ) AS ntz,
       array(named_struct('x', id, 'y', IF(id % 3 = 0, NULL, 'y'))) AS arr,
       map('k', array(CAST(id AS INT), NULL), 'z', array()) AS m,
       named_struct('z', id, 'a', named_struct('b', CAST(id AS DOUBLE))) AS st,
       NULL AS v
FROM range(0, 40)
"""


def _both(df, **kwargs):
    return (dsha.fingerprint(df, engine="jvm", **kwargs), dsha.fingerprint(df, engine="python", **kwargs))


def test_every_exact_type_gives_the_jars_fingerprint_and_state(spark):
    df = spark.sql(EVERY_TYPE).repartition(3)
    jvm, python = _both(df)
    assert python == jvm and python.rows == 40
    assert dsha.state(df, engine="python") == dsha.state(df, engine="jvm")
    halves = [dsha.state(df.where(f"id % 2 = {r}"), engine="python") for r in (0, 1)]
    assert dsha.Fingerprint.from_state(dsha.merge(halves)) == jvm  # states merge with each other and the jar's


def test_empty_tables_and_empty_partitions(spark):
    df = spark.sql(EVERY_TYPE)
    assert _both(df.limit(0))[1] == _both(df.limit(0))[0] and _both(df.limit(0))[1].rows == 0
    sparse = df.where("id = 7").repartition(4)  # three partitions without rows
    jvm, python = _both(sparse)
    assert python == jvm and python.rows == 1


def test_columns_by_name_as_the_jar_names_them(spark):
    df = spark.sql(EVERY_TYPE)
    for columns in (["ID", "str"], ["st.a"], "dec5", ["m", "arr", "i"]):
        jvm, python = _both(df, columns=columns)
        assert python == jvm, columns
    assert dsha.fingerprint(df, "ID", engine="python") == dsha.fingerprint(df, "id", engine="jvm")
    with pytest.raises(TypeError, match="alias an expression first"):
        dsha.fingerprint(df, columns=[df["id"] + 1], engine="python")


def test_equal_and_its_reason(spark):
    df = spark.sql(EVERY_TYPE)
    same = dsha.equal(df, df.orderBy("str").repartition(5), engine="python")
    assert same and same.left == dsha.fingerprint(df, engine="jvm")
    changed = dsha.equal(df, df.where("id <> 5"), engine="python")
    assert not changed and changed.reason == dsha.equal(df, df.where("id <> 5"), engine="jvm").reason


@pytest.mark.parametrize("schema_seed", range(10))
def test_random_nested_tables_equal_the_jar(spark, schema_seed):
    """The Arrow engine's random nested schemas (test_arrow_agreement.py), 4 seeds each: 40 tables per line."""
    for i in range(schema_seed * 4, schema_seed * 4 + 4):
        rnd = random.Random(1000 + i)
        schema = _schema(rnd)
        rows = [tuple(_value(rnd, f.dataType) for f in schema.fields) for _ in range(rnd.randint(0, 60))]
        df = spark.createDataFrame(rows, schema).repartition(2)
        jvm, python = _both(df)
        assert python == jvm, (i, schema.simpleString())


def test_what_the_transfer_cannot_carry_is_refused_with_the_column(spark):
    df = spark.sql("SELECT 1 AS id, INTERVAL '3' DAY AS wait, named_struct('i', INTERVAL '1' YEAR) AS nested")
    with pytest.raises(UnsupportedTypeError, match=r"column wait: interval day .*jar-free path cannot hash it"):
        dsha.fingerprint(df, engine="python")
    with pytest.raises(UnsupportedTypeError, match=r"column nested\.i: interval year"):
        dsha.fingerprint(df, columns=["nested"], engine="python")
    assert dsha.fingerprint(df, columns=["id"], engine="python") == dsha.fingerprint(df, columns=["id"], engine="jvm")
    if not spark.version.startswith("3."):
        collated = spark.sql("SELECT 'a' COLLATE UTF8_LCASE AS name")
        with pytest.raises(UnsupportedTypeError, match="column name: .*collation UTF8_LCASE"):
            dsha.fingerprint(collated, engine="python")
        with pytest.raises(UnsupportedTypeError, match="column v: variant"):
            dsha.fingerprint(spark.sql("SELECT parse_json('1') AS v"), engine="python")


KEY = bytes(range(101, 133))  # 32 bytes
# Small (secure-v1 runs a Python loop per row on the executors): every exact type, and maps inside a struct, an array
# and a map (the sorted entries of SPEC.md §16.1 at every depth).
TAMPER_TABLE = EVERY_TYPE.replace("FROM range(0, 40)", "FROM range(0, 12)").replace(
    "NULL AS v", "NULL AS v, named_struct('m', map(id, 'a', id + 100, IF(id % 2 = 0, NULL, 'b'))) AS sm, "
    "array(map('x', id), map()) AS am, map('k', map(id, array(id)), 'j', NULL) AS mm")


def test_keyed_and_secure_digests_without_the_jar(spark):
    """dsha-secure-v1/v2, dsha-keyed-v1 and dsha-keyed-v2 on the executors (issue 31): the jar's states (so its
    fingerprints), byte for byte; a state of part of the rows merges with the jar's of the rest."""
    df = spark.sql(TAMPER_TABLE).repartition(2)
    states = {}
    for algorithm, key in (("secure", None), ("secure-v2", None), ("keyed", KEY), ("keyed-v2", KEY.hex())):
        jvm = dsha.state(df, algorithm=algorithm, key=key, engine="jvm")
        assert dsha.state(df, algorithm=algorithm, key=key, engine="python") == jvm, algorithm
        states[algorithm] = dsha.Fingerprint.from_state(jvm)
        assert states[algorithm].rows == 12 and states[algorithm].algorithm != "dsha-v1"
    part = dsha.state(df.where("id < 5"), algorithm="keyed-v2", key=KEY, engine="python")
    rest = dsha.state(df.where("id >= 5"), algorithm="keyed-v2", key=KEY, engine="jvm")
    assert dsha.Fingerprint.from_state(dsha.merge([part, rest])) == states["keyed-v2"]
    part = dsha.state(df.where("id < 5"), algorithm="secure-v2", engine="python")
    rest = dsha.state(df.where("id >= 5"), algorithm="secure-v2", engine="jvm")
    assert dsha.Fingerprint.from_state(dsha.merge([part, rest])) == states["secure-v2"]
    changed = dsha.equal(df, df.where("id <> 3"), key=KEY, engine="python")
    assert not changed and changed.left == states["keyed"] and changed.right.rows == 11


def test_every_way_of_passing_a_key_without_the_jar(spark):
    """key= as bytes, bytearray, hex (either case, spaces around), base64, base64url: the same bytes as the jar reads;
    conf:NAME (#ALGORITHM): a setting removed at once and kept for this session, the jar's digest; bad keys are one
    line that names the setting and never the key (refused before any job)."""
    import base64

    from dsha.jarfree.keys import read_key

    for spelling in (KEY, bytearray(KEY), KEY.hex(), f" {KEY.hex().upper()}\n", base64.b64encode(KEY).decode(),
                     base64.urlsafe_b64encode(KEY).decode().rstrip("=")):
        secret, named = read_key(spark, spelling)
        assert secret.reveal() == KEY and named is None and repr(secret) == "<key>"
    df = spark.range(4).selectExpr("id", "CAST(id AS STRING) AS s")
    name = "spark.jarfree_test.key"  # (spark.dsha.secret.* settings go to the jar's key store over Connect)
    spark.conf.set(name, f"'{base64.b64encode(KEY).decode()}'")  # quoted, as SET NAME = '…' keeps it
    assert dsha.fingerprint(df, key=f"conf:{name}#dsha-keyed-v2", engine="python") == \
        dsha.fingerprint(df, key=KEY, algorithm="keyed-v2", engine="jvm")
    assert spark.conf.get(name, None) is None  # removed at once: no job's properties hold it
    assert dsha.fingerprint(df, key=f"conf:{name}", engine="python") == dsha.fingerprint(df, key=KEY, engine="jvm")
    short = bytes(range(200, 212))
    for key, message in ((short, "the key .key=. has 12 bytes: a key needs at least 16"),
                         (short.hex(), "has 12 bytes"), ("no key here", "neither hex nor base64"),
                         ("conf:spark.dsha.secret.never_set", "the setting spark.dsha.secret.never_set is not set"),
                         (f"conf:{name}#keyed-v2", "takes an id, dsha-keyed-v1 or dsha-keyed-v2"),
                         (f"conf:{name}# ", "names the algorithm '': conf:NAME#ALGORITHM takes an id")):
        with pytest.raises(ValueError, match=message) as e:
            dsha.fingerprint(df, key=key, engine="python")
        assert "\n" not in str(e.value) and short.hex() not in str(e.value) and KEY.hex() not in str(e.value)
    with pytest.raises(ValueError, match="unknown dsha algorithm 'md5'"):
        dsha.fingerprint(df, algorithm="md5", engine="python")
    with pytest.raises(ValueError, match="key= and algorithm='keyed' go together"):
        dsha.fingerprint(df, algorithm="secure", key=KEY, engine="python")
    with pytest.raises(ValueError, match="exact=False.*needs the dsha jar"):
        dsha.fingerprint(df, exact=False, engine="python")
    spark.conf.set("spark.dsha.engine", "gpu")
    try:
        with pytest.raises(ValueError, match="the session setting spark.dsha.engine is 'gpu'"):
            dsha.fingerprint(df)
    finally:
        spark.conf.unset("spark.dsha.engine")


def test_the_key_is_in_no_plan_of_the_jar_free_path(spark):
    """The key reaches the executors inside the pickled function (dsha.jarfree.keys): the plan of the job names the
    function and shows nothing it holds, in every explain mode; what holds it prints as <key>. (Event logs, the UI
    and logs: tests/python/test_key_leaks_everywhere.py, ways py_jarfree_*.)"""
    import contextlib
    import hashlib
    import io

    from dsha.jarfree.digests import partition_states
    from dsha.jarfree.keys import Secret, executor_secret

    df = spark.range(3)
    digest = hashlib.sha256(b'struct<"id":bigint>').digest()
    for algorithm in ("dsha-keyed-v1", "dsha-keyed-v2"):
        secret = Secret(KEY)
        sent = executor_secret(algorithm, secret, digest)
        assert repr(sent) == str(sent) == "<key>" and (sent.reveal() == KEY) == (algorithm == "dsha-keyed-v1")
        states = partition_states(df, digest, algorithm, secret)
        for mode in ("simple", "extended", "codegen", "cost", "formatted"):
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                states.explain(mode=mode)
            text = buf.getvalue()
            assert mode == "codegen" or "partition_state" in text, mode
            for form in (KEY.hex(), KEY.hex().upper(), sent.reveal().hex(), str(list(KEY)),
                         str([b - 256 if b > 127 else b for b in KEY])[1:40]):
                assert form not in text, (algorithm, mode)


def test_a_session_without_the_jar_takes_the_python_path_by_itself(spark):
    """A fresh session with no dsha jar (classic, or a local Spark Connect server started without it): auto takes the
    jar-free path with one DshaWarning, the same digests as the jar; engine="jvm" says the jar is missing."""
    expected = dsha.fingerprint(spark.sql(EVERY_TYPE))
    expected_columns = dsha.fingerprint(spark.sql(EVERY_TYPE), columns=["str", "m"])
    builder = 'SparkSession.builder.remote("local[2]")' if MODE == "connect" else \
        'SparkSession.builder.master("local[2]")'
    script = textwrap.dedent(f"""
        import warnings
        from pyspark.sql import SparkSession
        import dsha
        spark = {builder}.config("spark.ui.enabled", "false").config("spark.sql.session.timeZone", "UTC").getOrCreate()
        df = spark.sql({EVERY_TYPE!r})
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            print("digest", dsha.fingerprint(df).digest)
            print("columns", dsha.fingerprint(df, columns=["str", "m"]).digest)
            print("equal", bool(dsha.equal(df, df.repartition(3))))
            d = dsha.diff(df, df.where("id <> 5").unionByName(df.where("id = 7")))
            print("diff", d.only_left_count, d.only_right_count, d.left_digest, d.method)
        print("warnings", len([w for w in caught if issubclass(w.category, dsha.DshaWarning)]))
        print("warning", [str(w.message) for w in caught if issubclass(w.category, dsha.DshaWarning)][0])
        try:
            dsha.fingerprint(df, engine="jvm")
            print("jvm NO ERROR")
        except dsha.DshaNotLoadedError as e:
            print("jvm NOT LOADED")
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                         env=child_env(PYSPARK_SUBMIT_ARGS="pyspark-shell"))
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines() if " " in line)
    assert lines.get("digest") == expected.digest, out.stdout + out.stderr[-3000:]
    assert lines["columns"] == expected_columns.digest
    assert lines["equal"] == "True" and lines["warnings"] == "1", out.stdout
    assert lines["diff"] == f"1 1 {expected.digest} sketch"  # dsha.diff too, by itself on the jar-free path
    assert "has no dsha functions" in lines["warning"] and "spark.dsha.engine=jvm" in lines["warning"]
    assert lines["jvm"] == "NOT LOADED"


def test_executors_without_dsha_are_named_as_such():
    """Executors whose Python lacks dsha (PYSPARK_PYTHON pointing elsewhere): one error that says so, not a task's
    traceback."""
    bare = shutil.which("python3")
    if bare is None or subprocess.run([bare, "-c", "import dsha"], capture_output=True).returncode == 0:
        pytest.skip("needs a python3 on PATH without dsha")
    builder = 'SparkSession.builder.remote("local[1]")' if MODE == "connect" else \
        'SparkSession.builder.master("local[1]")'
    script = textwrap.dedent(f"""
        import warnings
        from pyspark.sql import SparkSession
        import dsha
        warnings.simplefilter("ignore")
        spark = {builder}.config("spark.ui.enabled", "false").getOrCreate()
        try:
            dsha.fingerprint(spark.range(3))
            print("NO ERROR")
        except ModuleNotFoundError as e:
            print(type(e).__name__, str(e))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                         env=child_env(PYSPARK_SUBMIT_ARGS="pyspark-shell", PYSPARK_PYTHON=bare))
    assert out.stdout.startswith("MissingDependencyError the executors' Python has no dsha"), \
        out.stdout + out.stderr[-3000:]


@pytest.mark.skipif(MODE == "connect", reason="the classic session's Python workers (no new JVM)")
def test_executors_without_cryptography_are_named_as_such(spark, tmp_path):
    """Executors whose Python cannot import cryptography (the suite's session, its workers started by a wrapper that
    puts a stand-in refusing the import first on their path): dsha-secure-v1 (and dsha-keyed-v2: the same AES) without
    the jar is one error naming it and the extra, not a worker's traceback; dsha-keyed-v1 (HMAC only) still gives the
    jar's digest there."""
    from dsha.errors import MissingDependencyError

    (tmp_path / "cryptography").mkdir()
    (tmp_path / "cryptography" / "__init__.py").write_text("raise ImportError(\"No module named 'cryptography'\")\n")
    wrapper = tmp_path / "python"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="{tmp_path}:$PYTHONPATH" exec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    df, key = spark.range(3), bytes(range(32))
    sc = spark.sparkContext
    python, sc.pythonExec = sc.pythonExec, str(wrapper)
    try:
        with pytest.raises(MissingDependencyError) as e:
            dsha.fingerprint(df, engine="python", algorithm="secure")  # dsha-keyed-v2 needs the same AES
        assert str(e.value).startswith("the executors' Python has no cryptography: ") and "dsha[arrow]" in str(e.value)
        assert "\n" not in str(e.value) and "Traceback" not in str(e.value)
        keyed = dsha.fingerprint(df, engine="python", key=key)
    finally:
        sc.pythonExec = python
    assert keyed == dsha.fingerprint(df, engine="jvm", key=key)


def test_skip_records_and_checks_across_the_two_paths(spark, tmp_path):
    """dsha.record / dsha.changed of DataFrame inputs on the jar-free path (spark.dsha.engine=python) write and read
    the same records as through the jar: recorded by one path, unchanged for the other; a real change is seen."""
    from spark_conf import sql_conf

    store = str(tmp_path / "store")
    df = spark.sql(EVERY_TYPE)
    with sql_conf(spark, {"spark.dsha.engine": "python"}):
        recorded = dsha.record({"t": df}, store=store, name="step", create_store=True)
    assert recorded.inputs["t"].fingerprint == dsha.fingerprint(df, engine="jvm")
    assert not dsha.changed({"t": df.repartition(4)}, store=store, name="step")  # through the jar: unchanged
    with sql_conf(spark, {"spark.dsha.engine": "python"}):
        changes = dsha.changed({"t": df.where("id <> 3")}, store=store, name="step")
    assert changes and [c.what for c in changes] == ["row count"]


def test_logical_hash_column_without_the_jar(spark):
    """dsha.jarfree.columns.logical_hash (an Arrow UDF, Spark 4.1+): each row's digest equals the jar's
    logical_hash of the same columns, row by row."""
    from pyspark.sql import functions as F

    from dsha.functions import logical_hash as jar_logical_hash
    from dsha.jarfree.columns import logical_hash

    df = spark.sql(EVERY_TYPE)
    if not hasattr(F, "arrow_udf"):
        with pytest.raises(UnsupportedTypeError, match="needs Arrow UDFs"):
            logical_hash("id")
        return
    for names in (["id", "str", "m", "arr", "st", "ts", "ntz", "dec38", "f", "v"], ["st.a", "bin"]):
        rows = df.select("id", logical_hash(*names).alias("py"), jar_logical_hash(*names).alias("jvm")).collect()
        assert len(rows) == 40 and all(bytes(r["py"]) == bytes(r["jvm"]) for r in rows), names
    interval = spark.sql("SELECT INTERVAL '3' DAY AS wait")
    with pytest.raises(Exception, match="column wait: .*cannot hash as the jar does"):
        interval.select(logical_hash("wait")).collect()
