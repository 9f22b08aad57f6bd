"""dsha.fingerprint_delta: digests of Delta table versions from per-file states (python/dsha/tables/delta.py).

Delta Lake must be loaded when the SparkContext starts (spark.jars.packages, spark.sql.extensions), and a process has
one SparkContext, which the suite's shared ``spark`` fixture owns without Delta. So these tests run in a child
pytest process with a Delta session of its own: in the suite, ``test_delta_suite_in_child`` runs this file again
with DSHA_DELTA_CHILD=1 and reports its outcome; run that way directly it is the suite:

    DSHA_DELTA_CHILD=1 DSHA_JAR=... PYTHONPATH=python pytest tests/python/test_delta.py

Skipped when delta-spark is not importable or there is no Delta release for this Spark line (dsha/_delta_versions.py).
"""
import glob
import json
import os
import random
import subprocess
import sys

import pyspark
import pytest

import dsha
from dsha._delta_versions import delta_for_spark
from spark_conf import SUITE_SESSION  # tests/spark_conf.py, on sys.path by conftest

CHILD = os.environ.get("DSHA_DELTA_CHILD") == "1"
MODE = os.environ.get("DSHA_SPARK_MODE", "classic")


def _skip_reason():
    try:
        import delta  # noqa: F401
    except ImportError:
        return "delta-spark is not installed (pip install the version in dsha/_delta_versions.py for this Spark)"
    import pyspark

    if delta_for_spark(pyspark.__version__) is None:
        return f"no Delta Lake release for Spark {pyspark.__version__} (dsha/_delta_versions.py)"
    return None


SKIP = _skip_reason()


@pytest.mark.skipif(CHILD or MODE == "connect", reason="the child runs the tests themselves, in classic mode: once, "
                                                     "in the classic pass")
def test_delta_suite_in_child():
    if SKIP:
        pytest.skip(SKIP)
    from conftest import child_env

    env = child_env(DSHA_DELTA_CHILD="1", DSHA_SPARK_MODE="classic")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__],
                       env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-20000:] + r.stderr[-5000:]


@pytest.mark.skipif(CHILD or MODE != "connect", reason="Spark Connect only")
def test_connect_is_a_clear_error(spark):
    with pytest.raises(NotImplementedError, match="classic SparkSession"):
        dsha.fingerprint_delta(spark, "/nonexistent")


child = pytest.mark.skipif(not CHILD or SKIP is not None, reason=SKIP or "runs in the child (DSHA_DELTA_CHILD=1)")


@pytest.fixture(scope="module")
def dspark():
    import pyspark
    from pyspark.sql import SparkSession

    release = delta_for_spark(pyspark.__version__)
    builder = (SparkSession.builder.master("local[2]")
               .config("spark.jars.packages", release.maven_coordinate)
               .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
               .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.default.parallelism", "2")
               .config("spark.databricks.delta.snapshotPartitions", "2")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.session.timeZone", "UTC"))
    for k, v in SUITE_SESSION.items():
        builder = builder.config(k, v)
    session = dsha.configure(builder).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def _oracle(spark, path, version=None):
    r = spark.read.format("delta")
    if version is not None:
        r = r.option("versionAsOf", version)
    return dsha.fingerprint(r.load(path)).digest


def _check(spark, path, cache, version=None, **expect):
    got = dsha.fingerprint_delta(spark, path, version=version, state=cache)
    assert got.digest == _oracle(spark, path, version), (version, got)
    assert got.files_read + got.files_reused == got.files_total
    for k, v in expect.items():
        assert getattr(got, k) == v, (k, got)
    return got


def _nfiles(spark, path):
    return spark.read.format("delta").load(path).select("_metadata.file_path").distinct().count()


def _version(path):
    return max(int(os.path.basename(f)[:-5]) for f in glob.glob(os.path.join(path, "_delta_log", "*.json")))


def _adds_after(path, version):
    """The add actions of the commits after ``version``: the files, or new deletion vectors, they wrote."""
    n = 0
    for v in range(version + 1, _version(path) + 1):
        with open(os.path.join(path, "_delta_log", "%020d.json" % v)) as f:
            n += sum(1 for line in f if "add" in json.loads(line))
    return n


def _rows(spark, n, start=0, seed=0):
    # A string partition column with characters that log paths URL-encode (space, %, =).
    return spark.range(start, start + n).selectExpr(
        "id", f"cast((id * 7 + {seed}) % 101 as int) as v", "concat('p %=', cast(id % 3 as string)) as part",
        "case when id % 5 = 0 then null else concat('s', cast(id as string)) end as s")


def _table(spark, tmp_path, dv):
    path = str(tmp_path / "t")
    (_rows(spark, 300).repartition(3).write.format("delta").partitionBy("part")
     .option("delta.enableDeletionVectors", "true" if dv else "false").save(path))
    return path


@child
def test_lifecycle(dspark, tmp_path):
    spark = dspark
    path, cache = _table(spark, tmp_path, True), str(tmp_path / "cache.json")
    n = _check(spark, path, cache, files_reused=0).files_total
    assert n == _nfiles(spark, path) and n > 3
    _check(spark, path, cache, files_read=0, files_reused=n)  # unchanged: from the log alone
    assert not os.path.exists(os.path.join(path, "_dsha"))  # nothing written inside the table

    for change in [  # each reads only the files it wrote, or gave a new deletion vector
            lambda: _rows(spark, 30, 300, 1).coalesce(1).write.format("delta").mode("append").save(path),
            lambda: spark.sql(f"DELETE FROM delta.`{path}` WHERE id = 7"),  # one file gets a DV
            lambda: spark.sql(f"UPDATE delta.`{path}` SET v = v + 1000 WHERE id IN (10, 11)")]:
        before = _version(path)
        change()
        _check(spark, path, cache, files_read=_adds_after(path, before))

    spark.sql(f"OPTIMIZE delta.`{path}`")  # dataChange=false: same digest, nothing read
    _check(spark, path, cache, files_read=0)

    # A delete in an optimized file breaks its group: the group's remaining files (one per partition) are read.
    spark.sql(f"DELETE FROM delta.`{path}` WHERE id = 12")
    _check(spark, path, cache, files_read=1)


@child
def test_delete_without_deletion_vectors(dspark, tmp_path):
    spark = dspark
    path, cache = _table(spark, tmp_path, False), str(tmp_path / "cache.json")
    _check(spark, path, cache)
    spark.sql(f"DELETE FROM delta.`{path}` WHERE id = 7")  # the file is rewritten without the row
    _check(spark, path, cache, files_read=1)
    spark.sql(f"OPTIMIZE delta.`{path}`")
    _check(spark, path, cache, files_read=0)


@child
def test_overwrite_schema_change_restore(dspark, tmp_path):
    spark = dspark
    path, cache = _table(spark, tmp_path, True), str(tmp_path / "cache.json")
    _check(spark, path, cache)
    _rows(spark, 50, 1000, 2).write.format("delta").mode("overwrite").save(path)
    _check(spark, path, cache, files_reused=0)
    (_rows(spark, 20, 2000, 3).withColumn("extra", dsha_lit(spark)).write.format("delta").mode("append")
     .option("mergeSchema", "true").save(path))
    n = _nfiles(spark, path)
    _check(spark, path, cache, files_read=n)  # a new schema: every state changes (older files read as nulls)
    _check(spark, path, cache, files_read=0)
    _check(spark, path, cache, version=0)  # time travel across the schema change
    _check(spark, path, cache, files_read=0)  # the newer schema's states are still there
    spark.sql(f"RESTORE TABLE delta.`{path}` TO VERSION AS OF 0")
    _check(spark, path, cache)
    # fingerprint_path dispatches format="delta"
    got = dsha.fingerprint_path(spark, path, format="delta", state=cache)
    assert got.digest == _oracle(spark, path) and got.files_read == 0
    assert dsha.fingerprint_path(spark, path, format="delta", versionAsOf=1).digest == _oracle(spark, path, 1)
    with pytest.raises(ValueError, match="update_manifest"):
        dsha.fingerprint_path(spark, path, format="delta", update_manifest=True)


def dsha_lit(spark):
    from pyspark.sql import functions as F

    return F.concat(F.lit("x"), F.col("id").cast("string"))


@child
def test_a_user_column_named_metadata_is_refused_not_hashed_wrongly(dspark, tmp_path):
    """A user column ``_metadata`` hides Spark's metadata column the per-file reads group by: a struct with a
    ``file_path`` field grouped every row under the user's value and the files' states came back empty (a digest
    other than the full read's, exit 0). Now a one-line error naming the column and the whole-table call."""
    spark = dspark
    path = str(tmp_path / "m")
    spark.sql("SELECT id, named_struct('file_path', 'x') AS _metadata FROM range(5)").write.format("delta").save(path)
    assert _oracle(spark, path)  # the full read works
    with pytest.raises(ValueError, match=r"column named '_metadata'.*dsha.fingerprint\(spark.read"):
        dsha.fingerprint_delta(spark, path)


@child
def test_no_cache_and_empty_table(dspark, tmp_path):
    spark = dspark
    path = str(tmp_path / "e")
    _rows(spark, 0).write.format("delta").save(path)
    got = dsha.fingerprint_delta(spark, path)
    assert got.digest == _oracle(spark, path) and got.rows == 0
    _rows(spark, 40).write.format("delta").mode("append").save(path)
    got = dsha.fingerprint_delta(spark, path)
    assert got.digest == _oracle(spark, path) and got.files_read == got.files_total and got.files_reused == 0


@child
def test_random_sequence(dspark, tmp_path):
    """Random appends, deletes, updates, OPTIMIZE, overwrites and DV toggles; the full digest is the oracle."""
    spark = dspark
    rng = random.Random(18)
    path, cache = _table(spark, tmp_path, True), str(tmp_path / "cache.json")
    next_id = 300
    _check(spark, path, cache)
    for step in range(6):
        before = _version(path)
        op = rng.choice(["append", "delete", "update", "optimize", "dv", "overwrite", "check"])
        if op == "append":
            n = rng.randint(1, 40)
            _rows(spark, n, next_id, step).repartition(rng.randint(1, 2)).write.format("delta").mode("append").save(path)
            next_id += n
        elif op == "delete":
            spark.sql(f"DELETE FROM delta.`{path}` WHERE id % {rng.randint(5, 40)} = {rng.randint(0, 4)}")
        elif op == "update":
            spark.sql(f"UPDATE delta.`{path}` SET v = v + 1 WHERE id % {rng.randint(5, 40)} = 1")
        elif op == "optimize":
            spark.sql(f"OPTIMIZE delta.`{path}`")
        elif op == "dv":
            flag = rng.choice(["true", "false"])
            spark.sql(f"ALTER TABLE delta.`{path}` SET TBLPROPERTIES ('delta.enableDeletionVectors' = '{flag}')")
        elif op == "overwrite" and rng.random() < 0.3:
            _rows(spark, 60, next_id, step).write.format("delta").mode("overwrite").save(path)
            next_id += 60
        got = _check(spark, path, cache)
        if op == "optimize":
            assert got.files_read == 0, (step, got)
        elif op in ("append", "delete", "update"):
            assert got.files_read == _adds_after(path, before), (step, op, got)


@child
def test_the_store_keeps_delta_states(dspark, tmp_path):
    """`dsha.changed` / `dsha check` on a Delta table: the record keeps the table's state cache (SPEC.md §14), so an
    OPTIMIZE is "unchanged" without reading data, and a delete is a change."""
    from dsha.store import open_store

    spark = dspark
    path, store = _table(spark, tmp_path, True), str(tmp_path / "store")
    table = dsha.Path(path, "delta")
    dsha.record({"events": table}, store=store, name="step", spark=spark)
    files = open_store(store).latest("step").inputs["events"].files
    assert files["format"] == "dsha-delta-states" and files["table"].endswith("/t")
    spark.sql(f"OPTIMIZE delta.`{path}`")
    assert not dsha.changed({"events": table}, store=store, name="step", spark=spark)
    spark.sql(f"DELETE FROM delta.`{path}` WHERE id = 3")
    changes = dsha.changed({"events": table}, store=store, name="step", spark=spark)
    assert [c.what for c in changes] == ["row count"]
    assert changes.current.inputs["events"].fingerprint.digest == _oracle(spark, path)


@child
def test_approximate_fingerprint_from_the_log(dspark, tmp_path):
    """exact=False (dsha-meta-v1, SPEC.md §13.1): OPTIMIZE keeps it, every data change (append, delete, a restore of
    earlier content) changes it — never "unchanged" for changed rows; time travel gives the older version's."""
    spark = dspark
    path = _table(spark, tmp_path, True)

    def approx(version=None):
        fp = dsha.fingerprint_delta(spark, path, version=version, exact=False).fingerprint
        assert fp.algorithm == "dsha-meta-v1" and fp.rows == -1 and fp.digest.startswith("f80b5f501")
        return fp.digest

    first, v0 = approx(), _version(path)
    assert approx() == first
    spark.sql(f"OPTIMIZE delta.`{path}`")
    assert _version(path) == v0 + 1 and approx() == first  # layout only
    seen = {first}
    for change in [
            lambda: _rows(spark, 10, 300, 1).write.format("delta").mode("append").save(path),
            lambda: spark.sql(f"DELETE FROM delta.`{path}` WHERE id = 7"),
            lambda: spark.sql(f"RESTORE TABLE delta.`{path}` TO VERSION AS OF {v0}")]:
        change()
        now = approx()
        assert now not in seen, "a data change kept the approximate fingerprint"
        seen.add(now)
    assert approx(version=v0 + 1) == first  # time travel: as it was
    # the CLI routes --approximate on a Delta path to the log
    assert dsha.fingerprint_delta(spark, path, exact=False).fingerprint.schema == \
        dsha.fingerprint(spark.read.format("delta").load(path)).schema


@child
def test_file_list_from_the_cache_and_the_commits(dspark, tmp_path, monkeypatch):
    """A cache that holds exactly the files of its version lists a newer version from the commits since (no Spark
    job for Delta's log replay); when a commit is gone, Delta's snapshot lists the files instead. Always the
    digest of a full read."""
    import dsha.tables.delta as delta_mod

    spark = dspark
    path, cache = _table(spark, tmp_path, True), str(tmp_path / "cache.json")
    _check(spark, path, cache)
    with open(cache) as f:
        assert json.load(f)["listed"]
    listings = []
    real = delta_mod._files
    monkeypatch.setattr(delta_mod, "_files", lambda *a: listings.append(1) or real(*a))
    _check(spark, path, cache, files_read=0)  # unchanged
    spark.sql(f"OPTIMIZE delta.`{path}`")
    _check(spark, path, cache, files_read=0)
    before = _version(path)
    _rows(spark, 20, 300, 2).coalesce(1).write.format("delta").mode("append").save(path)
    _check(spark, path, cache, files_read=_adds_after(path, before))
    assert listings == []
    # an edited cache (a unit dropped) is not taken as the file list: Delta lists, the other states are used
    with open(cache) as f:
        doc = json.load(f)
    units = next(iter(doc["schemas"].values()))
    dropped = units.pop(0)
    with open(cache, "w") as f:
        json.dump(doc, f)
    _check(spark, path, cache, files_read=len(dropped["files"]))
    assert len(listings) == 1
    # a commit that is gone (log cleanup behind a checkpoint): Delta's own listing
    c = _version(path)
    spark.sql(f"ALTER TABLE delta.`{path}` SET TBLPROPERTIES ('delta.checkpointInterval' = '1')")
    _rows(spark, 5, 400, 3).coalesce(1).write.format("delta").mode("append").save(path)
    assert glob.glob(os.path.join(path, "_delta_log", "%020d.checkpoint*" % (c + 2))), "no checkpoint at c + 2"
    added = _adds_after(path, c + 1)
    os.remove(os.path.join(path, "_delta_log", "%020d.json" % (c + 1)))
    _check(spark, path, cache, files_read=added)
    assert len(listings) == 2


@child
def test_a_broken_group_reads_its_other_files(dspark, tmp_path):
    """An OPTIMIZE that writes several files makes them one group; a delete in one of them breaks it, and the
    group's other files — known only from the cache — are read again by their paths in the log."""
    spark = dspark
    path, cache = str(tmp_path / "u"), str(tmp_path / "cache.json")
    (spark.range(0, 600).selectExpr("id", "cast(id % 7 as int) v").repartition(6).write.format("delta")
     .option("delta.enableDeletionVectors", "true").save(path))
    _check(spark, path, cache)
    size = max(os.path.getsize(f) for f in glob.glob(os.path.join(path, "*.parquet")))
    spark.conf.set("spark.databricks.delta.optimize.maxFileSize", str(size * 3))
    try:
        before = _version(path)
        spark.sql(f"OPTIMIZE delta.`{path}`")
    finally:
        spark.conf.unset("spark.databricks.delta.optimize.maxFileSize")
    written = _adds_after(path, before)
    assert written >= 2
    _check(spark, path, cache, files_read=0)
    spark.sql(f"DELETE FROM delta.`{path}` WHERE id = 5")  # one of the group's files gets a deletion vector
    _check(spark, path, cache, files_read=written)



_STORE_WRITER = r"""
import sys
from pyspark.sql import SparkSession
import dsha
from dsha.store import TableStore
from test_store import make_record
path, writer, jars = sys.argv[1], int(sys.argv[2]), sys.argv[3]
spark = dsha.configure(SparkSession.builder.master("local[1]")
    .config("spark.driver.extraClassPath", jars)
    .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
    .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
    .config("spark.ui.enabled", "false")).getOrCreate()
store = TableStore(spark, f"delta.`{path}`", using="delta")
for i in range(3):
    store.put(make_record("shared", 100 * writer + i))
spark.stop()
"""


@child
@pytest.mark.skipif(int(pyspark.__version__.split(".")[0]) < 4,
                    reason="once in the test plan (three Delta JVMs, a minute): on Spark 4, in the smoke step of 4.0 "
                    "(the table store is the same Python code on every line)")
def test_table_store_on_delta_with_concurrent_writer_processes(dspark, tmp_path):
    """Three processes, each with its own Spark, append records to one Delta table store at once: Delta's
    transactional appends keep every record, and the latest is the latest written."""
    import subprocess

    from conftest import child_env
    from dsha.store import TableStore

    spark = dspark
    path = str(tmp_path / "store")
    # created once, before the writers race (by path: Delta 4 creates no table from a path identifier's DDL)
    spark.createDataFrame([], TableStore.COLUMNS).write.format("delta").save(path)
    # Delta's jars as this session resolved them (no second Ivy resolution racing in three processes)
    jars = ":".join(u[len("file://"):] if u.startswith("file://") else u
                    for u in spark.sparkContext.getConf().get("spark.repl.local.jars").split(",") if "dsha" not in u)
    script = tmp_path / "writer.py"
    script.write_text(_STORE_WRITER)
    env = child_env(PYTHONPATH=os.pathsep.join([os.path.dirname(__file__)] + sys.path))
    procs = [subprocess.Popen([sys.executable, str(script), path, str(w), jars], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for w in range(3)]
    outs = [p.communicate(timeout=600)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], "\n".join(o[-3000:] for o in outs)
    rows = spark.read.format("delta").load(path).collect()
    assert sorted(r["name"] for r in rows) == ["shared"] * 9
    latest = TableStore(spark, f"delta.`{path}`", using="delta").latest("shared")
    assert (latest.recorded_ns, latest.id) == max((r["recorded_ns"], r["id"]) for r in rows)
