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


def steps(root):
    """A directory store's step folders (not its .dsha-store marker)."""
    return [f for f in os.listdir(root) if not f.startswith(".")]


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
    behind = store.put(make_record("step", 2, ns=first.recorded_ns - 1))  # a clock behind: stamped after
    assert behind.recorded_ns == first.recorded_ns + 1 and store.latest("step") == behind
    newer = make_record("step", 3, ns=first.recorded_ns + 10)
    assert store.put(newer) == newer
    assert store.latest("step") == newer
    assert store.latest("other step") is None and store.latest("step/../x") is None


def test_directory_store_prunes_to_keep(tmp_path):
    store = DirectoryStore(str(tmp_path), keep=2)
    for n in range(6):
        store.put(make_record("a b/c", n, ns=1000 + n))
    [folder] = steps(tmp_path)
    assert len(os.listdir(tmp_path / folder)) == 3  # the latest and 2 older ones
    assert store.latest("a b/c").inputs["df"].fingerprint.rows == 5


def _writer(root, worker, names, count, barrier):
    store = DirectoryStore(root, keep=3)
    barrier.wait()  # all writers start together, to collide as much as possible
    written = []
    for i in range(count):
        for name in names:
            record = store.put(make_record(name, worker * 1000 + i, version=f"w{worker}"))
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
    for folder in steps(root):
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
    [folder] = steps(tmp_path)
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
    [folder] = steps(tmp_path)
    (tmp_path / folder / f"{changes.current.recorded_ns * 10:020d}-{'0' * 32}.json").write_text("{")
    with pytest.raises(StoreError, match="corrupt dsha store entry"):
        dsha.changed({"df": df}, store=str(tmp_path), name="step")


def test_foreign_files_are_ignored_with_a_warning(tmp_path):
    store = DirectoryStore(str(tmp_path))
    record = make_record("step", 1)
    store.put(record)
    [folder] = steps(tmp_path)
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
    second = store.put(make_record("step", 2, ns=first.recorded_ns - 5))  # a clock behind: stamped after first
    assert second.recorded_ns == first.recorded_ns + 1
    store.put(make_record("other", 3))
    again = open_store("table:" + table, spark)
    assert again.latest("step") == second and again.latest("other").inputs["df"].fingerprint.rows == 3
    spark.createDataFrame([("step", second.recorded_ns + 1, "f" * 32, "not json")], TableStore.COLUMNS) \
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


# --- The store's order is not a clock (issue 34, item 7) ---

HOUR = 3600 * 10**9


def test_a_clock_ahead_does_not_hide_a_later_record(tmp_path):
    store = DirectoryStore(str(tmp_path / "s"))
    now = 1_700_000_000 * 10**9
    ahead = store.put(make_record("step", 2, ns=now + HOUR))  # a writer whose clock is 1 h ahead
    later = store.put(make_record("step", 1, ns=now))  # then a writer with a correct clock
    assert later.recorded_ns == ahead.recorded_ns + 1
    assert store.latest("step") == later  # the old order (the writers' clocks) gave the first one, for an hour


def test_skewed_clocks_through_dsha_changed(spark, tmp_path, monkeypatch):
    import time
    store = str(tmp_path / "s")
    d1, d2 = spark.range(3), spark.range(4)
    real = time.time_ns
    monkeypatch.setattr(time, "time_ns", lambda: real() + HOUR)  # this writer's clock is 1 h ahead
    dsha.record({"df": d2}, store=store, name="step")
    monkeypatch.setattr(time, "time_ns", real)
    assert dsha.changed({"df": d1}, store=store, name="step")  # the data went back to D1
    dsha.record({"df": d1}, store=store, name="step")  # recorded by a correct clock
    assert not dsha.changed({"df": d1}, store=store, name="step")  # old code: "changed", against the D2 record
    changes = dsha.changed({"df": d2}, store=store, name="step")
    assert changes and [c.input for c in changes] == ["df"]


def test_entries_of_an_older_dsha_are_read_and_new_ones_come_after(tmp_path):
    root = tmp_path / "old"
    now = 1_700_000_000 * 10**9
    writer = DirectoryStore(str(tmp_path / "scratch"))
    writer.put(make_record("step", 0, ns=1))
    [slug] = steps(tmp_path / "scratch")  # the step's folder name, as every version names it
    (root / slug).mkdir(parents=True)  # an older dsha's store: no marker, entries named by their clock
    for n, ns in [(1, now + 2 * HOUR), (2, now + HOUR), (3, now + 3 * HOUR)]:
        record = make_record("step", n, ns=ns)
        (root / slug / f"{ns:020d}-{record.id}.json").write_text(record.to_json())
    store = DirectoryStore(str(root))
    assert store.latest("step").inputs["df"].fingerprint.rows == 3  # among old entries: their order, as before
    new = store.put(make_record("step", 4, ns=now))  # an older clock than every old entry
    assert new.recorded_ns > now + 3 * HOUR and store.latest("step") == new
    assert (root / ".dsha-store").is_file()  # the older store is marked now


def _skewed_writer(store, worker, count, out):
    offset = (worker - 4) * HOUR  # clocks from 4 h behind to 3 h ahead
    base = 1_700_000_000 * 10**9 + offset
    for i in range(count):
        stored = store.put(make_record("shared", worker * 1000 + i, ns=base - i * 10**9))  # this clock runs back
        out.append((worker, i, stored.recorded_ns, stored.id))


def test_concurrent_writers_with_skewed_clocks_and_a_reader(tmp_path):
    import threading
    store = DirectoryStore(str(tmp_path / "s"), keep=10_000)
    written, seen, done = [], [], threading.Event()

    def reader():
        while not done.is_set():
            latest = store.latest("shared")
            if latest is not None:
                seen.append((latest.recorded_ns, latest.id))

    threads = [threading.Thread(target=_skewed_writer, args=(store, w, 20, written)) for w in range(8)]
    watcher = threading.Thread(target=reader)
    watcher.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done.set()
    watcher.join()
    folder = tmp_path / "s" / steps(tmp_path / "s")[0]
    entries = sorted(os.listdir(folder))
    assert len(written) == 8 * 20 and len(entries) == 8 * 20  # no lost record
    order = [name[:-5].split("-") for name in entries]  # the store's total order: (recorded_ns, id)
    position = {rid: i for i, (_, rid) in enumerate(order)}
    for w in range(8):  # each writer's records in the order it wrote them, its clock running back notwithstanding
        mine = sorted((i, rid) for (worker, i, _, rid) in written if worker == w)
        assert [position[rid] for _, rid in mine] == sorted(position[rid] for _, rid in mine)
    assert seen == sorted(seen)  # a reader never sees the latest go back
    latest = store.latest("shared")
    assert [f"{latest.recorded_ns:020d}", latest.id] == order[-1]


# --- A store root that is not a store ---

def test_record_into_a_missing_parent_is_an_error_unless_asked(tmp_path):
    root = tmp_path / "not-mounted" / "dsha" / "state"
    store = DirectoryStore(str(root))
    assert store.latest("step") is None  # reading: never recorded
    with pytest.raises(StoreError, match=r"state cannot be a store: its parent .*not-mounted/dsha does not exist"):
        store.put(make_record("step", 1))
    assert not (tmp_path / "not-mounted").exists()  # old code: created it all, and wrote the record
    created = DirectoryStore(str(root), create=True)
    record = created.put(make_record("step", 1))
    assert DirectoryStore(str(root)).latest("step") == record and (root / ".dsha-store").is_file()


def test_a_non_empty_directory_that_is_not_a_store_is_an_error_unless_asked(tmp_path):
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "notes.txt").write_text("mine")
    with pytest.raises(StoreError, match=r"home is not a dsha store \(no .dsha-store marker; it holds notes.txt\)"):
        DirectoryStore(str(tmp_path / "home")).put(make_record("step", 1))
    assert os.listdir(tmp_path / "home") == ["notes.txt"]
    DirectoryStore(str(tmp_path / "home"), create=True).put(make_record("step", 1))
    DirectoryStore(str(tmp_path / "home")).put(make_record("step", 2))  # marked: a store from now on
    (tmp_path / "empty").mkdir()
    DirectoryStore(str(tmp_path / "empty")).put(make_record("step", 1))  # an empty directory, or a new one in an
    DirectoryStore(str(tmp_path / "new")).put(make_record("step", 1))  # existing folder, becomes a store
    assert (tmp_path / "empty" / ".dsha-store").is_file() and (tmp_path / "new" / ".dsha-store").is_file()


def test_cli_record_refuses_a_store_without_a_parent_before_spark_starts(tmp_path):
    from cli_runner import run_cli
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.json").write_text('{"a": 1}\n')
    store = tmp_path / "mnt" / "state"
    out = run_cli("record", "step", str(data), "--store", str(store), fresh_process=True)
    assert out.returncode == 2 and out.stdout == ""
    [line] = out.stderr.strip().splitlines()
    assert line.startswith(f"dsha: error: {store} cannot be a store: its parent {tmp_path / 'mnt'} does not exist")
    assert "--create-store" in line and not (tmp_path / "mnt").exists()
    check = run_cli("check", "step", str(data), "--store", str(store))  # in-process: it computes the digest
    assert check.returncode == 1, check.stderr  # check: never recorded
