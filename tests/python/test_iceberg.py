"""dsha.fingerprint_iceberg: digests of Iceberg table snapshots from per-file states (python/dsha/tables/iceberg.py).

The Iceberg runtime must be loaded when the SparkContext starts (spark.jars.packages, spark.sql.extensions), and a
process has one SparkContext, which the suite's shared ``spark`` fixture owns without Iceberg. So these tests run in
a child pytest process with an Iceberg session of its own (a Hadoop catalog ``local`` in a temporary warehouse): in
the suite, ``test_iceberg_suite_in_child`` runs this file again with DSHA_ICEBERG_CHILD=1 and reports its outcome;
run that way directly it is the suite:

    DSHA_ICEBERG_CHILD=1 DSHA_JAR=... PYTHONPATH=python:tests pytest tests/python/test_iceberg.py

The first run downloads the Iceberg runtime from Maven Central (Ivy). Skipped where Iceberg has no runtime for this
Spark line (dsha/_iceberg_versions.py: none for Spark 4.2 and 4.3).
"""
import json
import os
import random
import subprocess
import sys
import warnings

import pytest

import dsha
from dsha._iceberg_versions import EXTENSIONS, iceberg_for_spark
from spark_conf import SUITE_SESSION  # tests/spark_conf.py, on sys.path by conftest

CHILD = os.environ.get("DSHA_ICEBERG_CHILD") == "1"
MODE = os.environ.get("DSHA_SPARK_MODE", "classic")


def _skip_reason():
    import pyspark

    if iceberg_for_spark(pyspark.__version__) is None:
        return f"no Iceberg Spark runtime for Spark {pyspark.__version__} on Maven Central (dsha/_iceberg_versions.py)"
    return None


SKIP = _skip_reason()


@pytest.mark.skipif(CHILD or MODE == "connect", reason="the child runs the tests themselves, in classic mode: once, "
                                                     "in the classic pass")
def test_iceberg_suite_in_child():
    if SKIP:
        pytest.skip(SKIP)
    from conftest import child_env

    env = child_env(DSHA_ICEBERG_CHILD="1", DSHA_SPARK_MODE="classic")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__],
                       env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-20000:] + r.stderr[-5000:]


@pytest.mark.skipif(CHILD or MODE != "connect", reason="Spark Connect only")
def test_connect_is_a_clear_error(spark):
    with pytest.raises(NotImplementedError, match="classic SparkSession"):
        dsha.fingerprint_iceberg(spark, "local.db.nonexistent")


child = pytest.mark.skipif(not CHILD or SKIP is not None, reason=SKIP or "runs in the child (DSHA_ICEBERG_CHILD=1)")


@pytest.fixture(scope="module")
def ispark(tmp_path_factory):
    import pyspark
    from pyspark.sql import SparkSession

    release = iceberg_for_spark(pyspark.__version__)
    warehouse = str(tmp_path_factory.mktemp("warehouse"))
    builder = (SparkSession.builder.master("local[2]")
               .config("spark.jars.packages", release.maven_coordinate)
               .config("spark.sql.extensions", EXTENSIONS)  # dsha.configure appends dsha's: "A,B"
               .config("spark.sql.catalog.local", "org.apache.iceberg.spark.SparkCatalog")
               .config("spark.sql.catalog.local.type", "hadoop")
               .config("spark.sql.catalog.local.warehouse", warehouse)
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.default.parallelism", "2")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.session.timeZone", "UTC"))
    for k, v in SUITE_SESSION.items():
        builder = builder.config(k, v)
    session = dsha.configure(builder).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    assert EXTENSIONS in session.conf.get("spark.sql.extensions")
    yield session
    session.stop()


def _oracle(spark, table, snapshot=None):
    if snapshot is None:
        return dsha.fingerprint(spark.table(table)).digest
    return dsha.fingerprint(spark.sql(f"SELECT * FROM {table} VERSION AS OF {snapshot}")).digest


def _check(spark, table, cache, snapshot=None, **expect):
    got = dsha.fingerprint_iceberg(spark, table, snapshot_id=snapshot, state=cache)
    assert got.digest == _oracle(spark, table, snapshot), (snapshot, got)
    assert got.files_read + got.files_reused == got.files_total
    for k, v in expect.items():
        assert getattr(got, k) == v, (k, got)
    return got


def _ndata(spark, table, snapshot=None):
    at = f" VERSION AS OF {snapshot}" if snapshot is not None else ""
    return spark.sql(f"SELECT count(*) FROM {table}.files{at} WHERE content = 0").collect()[0][0]


def _snapshot(spark, table):
    return spark.sql(f"SELECT snapshot_id FROM {table}.refs WHERE name = 'main'").collect()[0][0]


def _summary(spark, table, key):
    """A number from the current snapshot's summary (e.g. added-data-files), 0 when absent."""
    s = _snapshot(spark, table)
    row = spark.sql(f"SELECT summary FROM {table}.snapshots WHERE snapshot_id = {s}").collect()[0][0]
    return int(row.get(key, 0))


def _touched(spark, table, before):
    """The data files of the current snapshot that are new since ``before``, or lie in a partition that got a
    delete file (or name a data file a new delete file references): what SPEC.md §15 re-reads."""
    cur = spark.sql(f"SELECT content, file_path, spec_id, to_json(partition) p, referenced_data_file r "
                    f"FROM {table}.files").collect()
    old = {r[0] for r in spark.sql(f"SELECT file_path FROM {table}.files VERSION AS OF {before}").collect()}
    new_deletes = [r for r in cur if r["content"] != 0 and r["file_path"] not in old]
    n = 0
    for r in cur:
        if r["content"] != 0:
            continue
        if r["file_path"] not in old or any(
                d["r"] == r["file_path"] or (d["r"] is None and (d["spec_id"], d["p"]) == (r["spec_id"], r["p"]))
                for d in new_deletes):
            n += 1
    return n


def _rows(spark, n, start=0, seed=0):
    # A string partition column with characters a path escapes (space, %, =), and nulls.
    return spark.range(start, start + n).selectExpr(
        "id", f"cast((id * 7 + {seed}) % 101 as int) as v", "concat('p %=', cast(id % 3 as string)) as part",
        "case when id % 5 = 0 then null else concat('s', cast(id as string)) end as s")


def _table(spark, name, props="'format-version'='2'", n=300):
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    spark.sql(f"CREATE TABLE {name} (id bigint, v int, part string, s string) USING iceberg PARTITIONED BY (part) "
              f"TBLPROPERTIES ({props})")
    _rows(spark, n).repartition(2).writeTo(name).append()
    return name


def _compact(spark, name):
    db_t = name.split(".", 1)[1]
    spark.sql(f"CALL local.system.rewrite_data_files(table => '{db_t}', options => map('rewrite-all', 'true'))")


@child
def test_lifecycle(ispark, tmp_path):
    spark = ispark
    t, cache = _table(spark, "local.db.life"), str(tmp_path / "cache.json")
    n = _check(spark, t, cache, files_reused=0).files_total
    assert n == _ndata(spark, t) and n >= 3
    _check(spark, t, cache, files_read=0, files_reused=n)  # unchanged: from metadata alone
    warehouse = spark.conf.get("spark.sql.catalog.local.warehouse")
    assert not any("dsha" in f for _, _, fs in os.walk(warehouse) for f in fs)  # nothing written in the table

    _rows(spark, 30, 300, 1).coalesce(1).writeTo(t).append()
    _check(spark, t, cache, files_read=_summary(spark, t, "added-data-files"))
    spark.sql(f"DELETE FROM {t} WHERE id = 7")  # copy-on-write: the file is rewritten without the row
    _check(spark, t, cache, files_read=1)

    spark.sql(f"ALTER TABLE {t} SET TBLPROPERTIES ('write.delete.mode'='merge-on-read', "
              "'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read')")
    _check(spark, t, cache, files_read=0)  # a property change: a new metadata file, the same files
    for change in [lambda: spark.sql(f"DELETE FROM {t} WHERE id = 8"),  # a position delete file
                   lambda: spark.sql(f"UPDATE {t} SET v = v + 1000 WHERE id IN (10, 13)")]:
        before = _snapshot(spark, t)
        change()
        expect = _touched(spark, t, before)
        assert 0 < expect < _ndata(spark, t)
        _check(spark, t, cache, files_read=expect)

    old = _snapshot(spark, t)
    _compact(spark, t)  # a replace snapshot: same digest, nothing read
    assert _snapshot(spark, t) != old
    _check(spark, t, cache, files_read=0)
    _check(spark, t, cache, snapshot=old)  # time travel to before the compaction
    _check(spark, t, cache, files_read=0)  # the newer snapshot's states are still there

    # A delete in a compacted partition breaks its group: that partition's files are read again.
    before = _snapshot(spark, t)
    spark.sql(f"DELETE FROM {t} WHERE id = 12")
    _check(spark, t, cache, files_read=_touched(spark, t, before))

    spark.sql(f"INSERT OVERWRITE {t} SELECT * FROM {t} WHERE part = 'p %=1'")  # dynamic: replaces one partition
    _check(spark, t, cache, files_read=_summary(spark, t, "added-data-files"))


@child
def test_reads_are_pruned_by_identity_partitions(ispark):
    """Iceberg does not prune by _file: the read job also filters on identity partition columns (SPEC.md §15.9),
    a filter every row of the files to read passes; none for other transforms."""
    from dsha.tables import iceberg

    spark = ispark
    for name, by in [("local.db.pi", "part"), ("local.db.pb", "bucket(4, id)")]:
        spark.sql(f"DROP TABLE IF EXISTS {name}")
        spark.sql(f"CREATE TABLE {name} (id bigint, v int, part string, s string) USING iceberg PARTITIONED BY ({by})")
        _rows(spark, 60).writeTo(name).append()
        snap, meta = _snapshot(spark, name), iceberg._metadata(spark, name)
        files = iceberg._files(spark, name, snap)
        some = files[:1]
        cond = iceberg._prune(meta, snap, False, spark.table(name).schema, some)
        if by == "part":
            assert cond is not None
            got = spark.table(name).where(cond).select("part").distinct().collect()
            assert [r[0] for r in got] == [some[0].values["part"]]
        else:
            assert cond is None


@child
def test_schema_evolution_and_overwrite(ispark, tmp_path):
    spark = ispark
    t, cache = _table(spark, "local.db.evo", n=120), str(tmp_path / "cache.json")
    first = _snapshot(spark, t)
    _check(spark, t, cache)
    spark.sql(f"ALTER TABLE {t} ADD COLUMN extra string")
    n = _ndata(spark, t)
    _check(spark, t, cache, files_read=n)  # a new read schema: every state changes (old files read as nulls)
    spark.sql(f"INSERT INTO {t} VALUES (1000, 1, 'p %=0', 's', 'x'), (1001, 2, 'new', NULL, NULL)")
    _check(spark, t, cache, files_read=_summary(spark, t, "added-data-files"))
    _check(spark, t, cache, snapshot=first)  # time travel across the schema change (the old schema)
    _check(spark, t, cache, files_read=0)
    spark.sql(f"ALTER TABLE {t} RENAME COLUMN extra TO extra2")
    _check(spark, t, cache, files_read=_ndata(spark, t))
    _rows(spark, 40, 5000).selectExpr("*", "'y' AS extra2").writeTo(t).overwritePartitions()
    _check(spark, t, cache)
    spark.sql(f"DELETE FROM {t}")
    got = _check(spark, t, cache, files_read=0)
    assert got.rows == 0 and got.files_total == 0


@child
def test_no_cache_empty_table_and_format_v1(ispark, tmp_path):
    spark = ispark
    spark.sql("DROP TABLE IF EXISTS local.db.e")
    spark.sql("CREATE TABLE local.db.e (id bigint, m map<string, int>, a array<struct<x: double>>) USING iceberg")
    got = dsha.fingerprint_iceberg(spark, "local.db.e")  # no snapshot yet
    assert got.digest == _oracle(spark, "local.db.e") and got.rows == 0 and got.files_total == 0
    spark.sql("INSERT INTO local.db.e VALUES (1, map('a', 1), array(named_struct('x', 1.5))), (2, NULL, NULL)")
    got = dsha.fingerprint_iceberg(spark, "local.db.e")
    assert got.digest == _oracle(spark, "local.db.e") and got.files_read == got.files_total >= 1
    t, cache = _table(spark, "local.db.v1", "'format-version'='1'", n=60), str(tmp_path / "c.json")
    _check(spark, t, cache)
    spark.sql(f"DELETE FROM {t} WHERE id < 3")
    _check(spark, t, cache)


@child
def test_deletion_vectors_format_v3(ispark, tmp_path):
    """Format version 3: a merge-on-read delete writes a deletion vector naming its data file, so only that file is
    read again (not the other files of its partition)."""
    spark = ispark
    t = _table(spark, "local.db.dv", "'format-version'='3', 'write.delete.mode'='merge-on-read', "
                                     "'write.update.mode'='merge-on-read'", n=120)
    _rows(spark, 60, 120, 1).repartition(1).writeTo(t).append()  # a second file in each partition
    cache = str(tmp_path / "cache.json")
    _check(spark, t, cache)
    spark.sql(f"DELETE FROM {t} WHERE id = 4")
    refs = [r[0] for r in spark.sql(f"SELECT referenced_data_file FROM {t}.files WHERE content = 1").collect()]
    assert refs and all(refs)  # deletion vectors, each naming its data file
    _check(spark, t, cache, files_read=1)
    spark.sql(f"DELETE FROM {t} WHERE id = 7")  # the same file's deletion vector is replaced: 1 file again
    before = _snapshot(spark, t)
    spark.sql(f"UPDATE {t} SET v = -1 WHERE id = 130")
    _check(spark, t, cache, files_read=_touched(spark, t, before) + 1)
    _compact(spark, t)
    _check(spark, t, cache, files_read=0)


@child
def test_random_sequence(ispark, tmp_path):
    """Random appends, copy-on-write and merge-on-read deletes, updates, overwrites, compactions, rollbacks; the
    full digest at each snapshot is the oracle."""
    spark = ispark
    rng = random.Random(18)
    t, cache = _table(spark, "local.db.rnd", "'format-version'='2'", n=200), str(tmp_path / "cache.json")
    snapshots = [_snapshot(spark, t)]
    next_id = 200
    _check(spark, t, cache)
    for step in range(8):
        op = rng.choice(["append", "delete", "update", "mode", "compact", "overwrite", "rollback", "check"])
        if op == "append":
            n = rng.randint(1, 30)
            _rows(spark, n, next_id, step).repartition(rng.randint(1, 2)).writeTo(t).append()
            next_id += n
        elif op == "delete":
            spark.sql(f"DELETE FROM {t} WHERE id % {rng.randint(5, 40)} = {rng.randint(0, 4)}")
        elif op == "update":
            spark.sql(f"UPDATE {t} SET v = v + 1 WHERE id % {rng.randint(5, 40)} = 1")
        elif op == "mode":
            mode = rng.choice(["merge-on-read", "copy-on-write"])
            spark.sql(f"ALTER TABLE {t} SET TBLPROPERTIES ('write.delete.mode'='{mode}', 'write.update.mode'='{mode}')")
        elif op == "compact":
            _compact(spark, t)
        elif op == "overwrite":
            _rows(spark, 50, next_id, step).writeTo(t).overwritePartitions()
            next_id += 50
        elif op == "rollback" and len(snapshots) > 2:
            # any earlier snapshot becomes current (set_current_snapshot: not only an ancestor, as rollback)
            spark.sql(f"CALL local.system.set_current_snapshot('{t.split('.', 1)[1]}', {rng.choice(snapshots[:-1])})")
        got = _check(spark, t, cache)
        if op == "compact":
            assert got.files_read == 0, (step, got)
        snapshots.append(_snapshot(spark, t))
    old = rng.choice(snapshots[:-1])
    _check(spark, t, cache, snapshot=old)


@child
def test_foreign_and_malformed_cache_ignored(ispark, tmp_path):
    spark = ispark
    a, b = _table(spark, "local.db.fa", n=40), _table(spark, "local.db.fb", n=40)
    cache = str(tmp_path / "cache.json")
    _check(spark, a, cache)
    with pytest.warns(dsha.DshaWarning, match="another Iceberg table"):
        got = _check(spark, b, cache, files_reused=0)
    assert json.load(open(cache))["table"] == b
    with open(cache, "w") as f:
        f.write("{not json")
    with pytest.warns(dsha.DshaWarning, match="unreadable"):
        _check(spark, b, cache, files_reused=0)
    _check(spark, b, cache, files_read=0)
    assert got.files_total > 0


@child
def test_the_store_keeps_iceberg_states(ispark, tmp_path):
    """`dsha.changed` / `dsha.record` on a dsha.Table that is Iceberg: the record keeps the state cache (SPEC.md
    §15), so a compaction is "unchanged" without reading data, and a delete is a change."""
    from dsha.store import open_store

    spark = ispark
    t, store = _table(spark, "local.db.st", n=90), str(tmp_path / "store")
    table = dsha.Table(t)
    dsha.record({"events": table}, store=store, name="step", spark=spark)
    files = open_store(store).latest("step").inputs["events"].files
    assert files["format"] == "dsha-iceberg-states" and files["table"] == t
    _compact(spark, t)
    assert not dsha.changed({"events": table}, store=store, name="step", spark=spark)
    spark.sql(f"DELETE FROM {t} WHERE id = 3")
    changes = dsha.changed({"events": table}, store=store, name="step", spark=spark)
    assert [c.what for c in changes] == ["row count"]
    assert changes.current.inputs["events"].fingerprint.digest == _oracle(spark, t)
    # the same through the list form the CLI uses ("table:NAME")
    dsha.record([f"table:{t}"], store=store, name="cli", spark=spark)
    assert not dsha.changed([f"table:{t}"], store=store, name="cli", spark=spark)


@child
def test_approximate_fingerprint_from_the_snapshots(ispark):
    """exact=False (dsha-meta-v1, SPEC.md §13.2): a compaction (a replace snapshot) keeps it, a data change changes
    it, a schema change too; time travel gives that snapshot's."""
    spark, name = ispark, "local.db.approx"
    _table(spark, name)

    def approx(snapshot=None):
        fp = dsha.fingerprint_iceberg(spark, name, snapshot_id=snapshot, exact=False).fingerprint
        assert fp.algorithm == "dsha-meta-v1" and fp.rows == -1 and fp.digest.startswith("f80b5f501")
        return fp.digest

    first, s0 = approx(), _snapshot(spark, name)
    _compact(spark, name)
    assert _snapshot(spark, name) != s0 and approx() == first
    seen = {first}
    for change in [lambda: _rows(spark, 10, 300).writeTo(name).append(),
                   lambda: spark.sql(f"DELETE FROM {name} WHERE id = 7"),
                   lambda: spark.sql(f"ALTER TABLE {name} ADD COLUMN w int")]:
        change()
        assert approx() not in seen, "a change kept the approximate fingerprint"
        seen.add(approx())
    assert approx(snapshot=s0) == first


@child
def test_cli_hash_table(ispark, tmp_path, capsys):  # keep last: the CLI stops the session it used
    """`dsha hash --table NAME [--state FILE]` on an Iceberg table (in this process: the CLI's session is this one,
    which it stops at the end, so this test comes last)."""
    from dsha import cli

    spark = ispark
    t, cache = _table(spark, "local.db.cli", n=50), str(tmp_path / "cli.json")
    expect = _oracle(spark, t)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert cli.main(["hash", "--table", t, "--state", cache, "--json"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["digest"] == expect and out["files_read"] == out["files"] > 0
    assert json.load(open(cache))["format"] == "dsha-iceberg-states"
