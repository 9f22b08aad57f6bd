"""The fingerprint store: records round-trip, the latest record wins (also with 8 concurrent writer processes), and a
corrupt or foreign entry is an error, never a record."""
import json
import multiprocessing
import os
import uuid

import pytest

import dsha
from dsha.core.fingerprint import Fingerprint
from dsha.store import (DirectoryStore, HadoopFileSystem, InputRecord, Record, StoreError, TableStore, open_store)

MODE = os.environ.get("DSHA_SPARK_MODE", "classic")


def make_record(name, n, ns=None, version=None):
    fp = Fingerprint(digest=f"f{n:04d}", rows=n, schema_digest="ab" * 32, content_sum="0" * 32,
                     schema='struct<"id":bigint>', algorithm="dsha-v1")
    inputs = {"data/x": InputRecord("path", "data/x", "parquet", fp, files=[{"file": "part-0", "size": n}]),
              "df": InputRecord("dataframe", None, None, fp)}
    return Record(name, inputs, version) if ns is None else Record(name, inputs, version, recorded_ns=ns)


@pytest.mark.parametrize("uri", [False, True])
def test_directory_store_round_trip_and_latest_wins(tmp_path, uri):
    store = open_store(("file:" if uri else "") + str(tmp_path / "s"))
    assert isinstance(store, DirectoryStore) and store.latest("step") is None
    first = make_record("step", 1, version="v1")
    store.put(first)
    assert store.latest("step") == first  # every field, the per-file extension point included
    store.put(make_record("step", 2, ns=first.recorded_ns - 1))  # older: does not win
    assert store.latest("step") == first
    newer = make_record("step", 3, ns=first.recorded_ns + 1)
    store.put(newer)
    assert store.latest("step") == newer
    assert store.latest("other step") is None and store.latest("step/../x") is None


def test_directory_store_prunes_to_keep(tmp_path):
    store = DirectoryStore(str(tmp_path), keep=2)
    for n in range(6):
        store.put(make_record("a b/c", n, ns=1000 + n))
    [folder] = os.listdir(tmp_path)
    assert len(os.listdir(tmp_path / folder)) == 3  # the latest and 2 older ones
    assert store.latest("a b/c").inputs["df"].fingerprint.rows == 5


def _writer(root, worker, names, count, barrier):
    store = DirectoryStore(root, keep=3)
    barrier.wait()  # all writers start together, to collide as much as possible
    written = []
    for i in range(count):
        for name in names:
            record = make_record(name, worker * 1000 + i, version=f"w{worker}")
            store.put(record)
            written.append((name, record.recorded_ns, record.id))
            seen = store.latest(name)  # read while others write: a whole record, and never older than ours
            assert (seen.recorded_ns, seen.id) >= (record.recorded_ns, record.id)
    return written


def test_concurrent_writer_processes(tmp_path):
    root, names = str(tmp_path / "store"), ["shared", "also shared", "third"]
    ctx = multiprocessing.get_context("spawn")  # no fork of this process's Spark threads
    with ctx.Manager() as manager:
        barrier = manager.Barrier(8)
        with ctx.Pool(8) as pool:
            results = pool.starmap(_writer, [(root, w, names, 25, barrier) for w in range(8)])
    store = DirectoryStore(root)
    for name in names:
        ours = [(ns, rid) for result in results for (n, ns, rid) in result if n == name]
        assert len(ours) == 8 * 25
        latest = store.latest(name)
        assert (latest.recorded_ns, latest.id) == max(ours)  # the latest write wins, as every reader sees it
    for folder in os.listdir(root):
        files = os.listdir(os.path.join(root, folder))
        assert files and not [f for f in files if f.startswith(".tmp")]  # no half-written entry is left
        for f in files:  # every entry parses
            with open(os.path.join(root, folder, f)) as fh:
                Record.from_json(fh.read(), f)


CORRUPT = {
    "truncated": lambda text: text[: len(text) // 2],
    "not a record": lambda text: json.dumps({"digest": "f00"}),
    "other format": lambda text: text.replace("dsha-store/1", "dsha-store/2"),
    "other name": lambda text: text.replace('"name": "step"', '"name": "another"'),
    "rows not a number": lambda text: text.replace('"rows": 7', '"rows": "7"'),
    "missing digest": lambda text: text.replace('"digest"', '"digestx"'),
}
MESSAGES = {"truncated": "not JSON", "not a record": "is not a dsha store entry", "other format": "dsha-store/2",
            "other name": "is the entry of 'another'", "rows not a number": "rows is '7'",
            "missing digest": "KeyError"}


@pytest.mark.parametrize("case", sorted(CORRUPT))
def test_corrupt_or_foreign_entry_is_an_error(tmp_path, case):
    store = DirectoryStore(str(tmp_path))
    record = make_record("step", 7)
    store.put(record)
    [folder] = os.listdir(tmp_path)
    [entry] = os.listdir(tmp_path / folder)
    path = tmp_path / folder / entry
    path.write_text(CORRUPT[case](path.read_text()))
    with pytest.raises(StoreError, match=MESSAGES[case]) as e:
        store.latest("step")
    assert str(path) in str(e.value)


def test_corrupt_latest_entry_never_means_unchanged(spark, tmp_path):
    df = spark.range(3)
    changes = dsha.changed({"df": df}, store=str(tmp_path), name="step")
    changes.record()
    assert not dsha.changed({"df": df}, store=str(tmp_path), name="step")
    [folder] = os.listdir(tmp_path)
    (tmp_path / folder / f"{changes.current.recorded_ns * 10:020d}-{'0' * 32}.json").write_text("{")
    with pytest.raises(StoreError, match="corrupt dsha store entry"):
        dsha.changed({"df": df}, store=str(tmp_path), name="step")


def test_foreign_files_are_ignored_with_a_warning(tmp_path):
    store = DirectoryStore(str(tmp_path))
    record = make_record("step", 1)
    store.put(record)
    [folder] = os.listdir(tmp_path)
    (tmp_path / folder / "README.txt").write_text("not an entry")
    (tmp_path / folder / ".hidden.crc").write_text("checksums of another file system")
    with pytest.warns(UserWarning, match="README.txt"):
        assert store.latest("step") == record


def test_table_store(spark, tmp_path):
    table = f"dsha_store_{uuid.uuid4().hex[:8]}"
    store = TableStore(spark, table, using="parquet", location=str(tmp_path / "t"))
    assert store.latest("step") is None
    first = make_record("step", 1, version="v1")
    store.put(first)
    store.put(make_record("step", 2, ns=first.recorded_ns - 5))  # appended later, but older: does not win
    store.put(make_record("other", 3))
    again = open_store("table:" + table, spark)
    assert again.latest("step") == first and again.latest("other").inputs["df"].fingerprint.rows == 3
    spark.createDataFrame([("step", first.recorded_ns + 1, "f" * 32, "not json")], TableStore.COLUMNS) \
        .write.insertInto(table)
    with pytest.raises(StoreError, match=f"corrupt dsha store entry {table}"):
        again.latest("step")
    spark.sql(f"DROP TABLE {table}")


@pytest.mark.skipif(MODE == "connect", reason="Hadoop's FileSystem is reached through a classic session's JVM")
def test_hadoop_file_system_reads_and_writes_the_same_layout(spark, tmp_path):
    hadoop = DirectoryStore("file://" + str(tmp_path), fs=HadoopFileSystem(spark))
    local = DirectoryStore(str(tmp_path))
    first = make_record("step", 1)
    hadoop.put(first)
    assert local.latest("step") == first
    second = make_record("step", 2)
    local.put(second)
    assert hadoop.latest("step") == second and hadoop.latest("nothing") is None


def test_open_store_needs_a_session_for_tables_and_remote_paths():
    with pytest.raises(StoreError, match="table store needs a SparkSession"):
        open_store("table:db.t")
    with pytest.raises(StoreError, match="needs a SparkSession"):
        open_store("hdfs://nn/dsha")
    with pytest.raises(StoreError, match="not a store"):
        open_store(42)
