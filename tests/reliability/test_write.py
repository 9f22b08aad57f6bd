"""dsha.write under faults (issue #14). The digest a write returns is merged from the states of the files the job
committed; it must equal dsha(*) of the files read back with the written schema, the digest of the same rows computed
without faults, and the `digest` of the manifest written beside the data: when task attempts fail after writing part
of their file (unpartitioned, sort-based and concurrent partitioned writers), when a speculative copy wins, when a
worker dies mid-write, with AQE on and off after a skewed shuffle, with 200 partition directories and concurrent
writers, for empty input, overwrites and failed writes. A writer killed (kill -9) mid-job, appending or overwriting,
never leaves a manifest that a re-digest trusts for files it does not describe: `dsha.fingerprint_path` then equals a
full read, and every manifest entry that still matches its file records that file's true state.

Unlike the other files here, these tests call the dsha package (`dsha.write`, `dsha.fingerprint_path`: the API
under test); the session is still the suite's (jar and extension given directly)."""
import glob
import json
import os
import re
import signal
import time
import urllib.parse
import uuid
import warnings
from pathlib import Path

import pytest
from pyspark import TaskContext
from pyspark.sql import functions as F

import dsha
import harness
from harness import JOB, digest_of, job_result, mixed

ROWS, PARTS = 24_000, 6  # 4,000 rows per partition
FAIL_AT = 2_000  # the row of each partition at which first attempts fail


# ------------------------------------------------------------------------------------------ helpers

def manifest_of(path: Path):
    """The manifest beside the data as JSON, or None."""
    f = path / "_dsha" / "manifest.json"
    return json.loads(f.read_text()) if f.exists() else None


def data_files(path: Path) -> set:
    """The files Spark reads under ``path`` (names starting with '_' or '.' are hidden, at every level), relative."""
    found = set()
    for top, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if not d.startswith(("_", "."))]
        found |= {os.path.relpath(os.path.join(top, f), path) for f in files if not f.startswith(("_", "."))}
    return found


def read_back(spark, path: Path, schema):
    return spark.read.schema(schema).parquet(str(path))


def write(df, path: Path, **kwargs):
    """dsha.write, which must not warn (for Parquet every write is exact and gets a manifest)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", dsha.DshaWarning)
        written = dsha.write(df, str(path), **kwargs)
    assert not [str(w.message) for w in caught if issubclass(w.category, dsha.DshaWarning)]
    return written


def check_write(spark, df, path: Path, expected: str, schema=None, **kwargs):
    """Writes ``df`` with dsha.write; its digest, dsha(*) of the files read back with the written schema and the
    manifest's digest all equal ``expected`` (the same rows digested without faults); the manifest lists exactly the
    files written, and a re-digest reuses every state from it."""
    schema = schema or df.schema
    written = write(df, path, **kwargs)
    assert written.digest == expected
    assert digest_of(spark, read_back(spark, path, schema)) == expected
    m = manifest_of(path)
    assert (m["digest"], m["rows"]) == (expected, written.rows)
    assert {e["path"] for e in m["files"]} == data_files(path)
    again = dsha.fingerprint_path(spark, str(path), schema=schema)
    assert (again.digest, again.files_read, again.files_reused) == (expected, 0, len(m["files"]))
    return written, m


def rows_per_file(spark, path: Path, schema) -> dict:
    """Rows of each non-empty data file, counted by Spark (input_file_name), by path relative to ``path``."""
    counts = read_back(spark, path, schema).groupBy(F.input_file_name().alias("f")).count().collect()
    root = os.path.realpath(path)
    return {os.path.relpath(urllib.parse.unquote(urllib.parse.urlparse(r.f).path), root): r["count"] for r in counts}


def assert_redigest_exact(spark, path: Path, schema, tmp: Path):
    """Whatever is left at ``path``: a re-digest from the manifest equals a full read; the manifest, if any, is whole
    (no warning), is trusted exactly for the files it describes as they are now (path, size, modification time), and
    each such entry records its file's true state (rows and sum of a full per-file read). Returns the manifest."""
    if not path.exists():
        with pytest.raises(Exception):
            dsha.fingerprint_path(spark, str(path), schema=schema)
        return None
    full = digest_of(spark, read_back(spark, path, schema))
    cached = dsha.fingerprint_path(spark, str(path), schema=schema)
    assert cached.digest == full
    assert cached.warnings == []
    truth_file = tmp / f"truth-{uuid.uuid4().hex}.json"
    truth = dsha.fingerprint_path(spark, str(path), schema=schema, use_cache=False, state=str(truth_file))
    assert (truth.digest, truth.files_read) == (full, truth.files_total)
    files = {e["path"]: e for e in json.loads(truth_file.read_text())["files"]}
    assert set(files) == data_files(path)
    assert {p: e["rows"] for p, e in files.items() if e["rows"]} == rows_per_file(spark, path, schema)
    manifest = manifest_of(path)
    described = 0
    for e in (manifest or {}).get("files", []):
        t = files.get(e["path"])
        if t is not None and (t["size"], t["modified"]) == (e["size"], e["modified"]):
            described += 1
            assert (e["rows"], e["sum"]) == (t["rows"], t["sum"]), f"the manifest misstates {e['path']}"
    assert (cached.files_total, cached.files_reused, cached.files_read) == (len(files), described,
                                                                          len(files) - described)
    return manifest


@pytest.fixture(scope="module")
def table(spark):
    """The generated table with a partition column ``p`` (5 values)."""
    return mixed(spark, ROWS, PARTS).selectExpr("*", "CAST(id % 5 AS INT) AS p")


@pytest.fixture(scope="module")
def expected(spark, table):
    return digest_of(spark, table)


# ------------------------------------------------------------------------------------------ 1. failed first attempts

@pytest.mark.parametrize("partition_by,conf", [
    pytest.param(None, {}, id="unpartitioned"),
    pytest.param("p", {"spark.sql.maxConcurrentOutputFileWriters": 10}, id="partition_by, concurrent writers"),
])
def test_first_attempts_fail_after_writing_part_of_their_file(spark, table, expected, tmp_path, partition_by, conf):
    """Every task's first attempt hands the writer 2,000 of its 4,000 rows, waits until its own file has bytes on
    disk (small Parquet row groups), then fails (TaskContext.attemptNumber() == 0); the retries write everything.
    (The rows stream straight into the writer: unpartitioned, or concurrent writers that need no sort.)"""
    out, markers = tmp_path / "t", tmp_path / "markers"
    markers.mkdir()

    def fail_mid_file(rows):  # defined here: pickled by value for the Python workers
        tc = TaskContext.get()
        for n, row in enumerate(rows):
            if n == FAIL_AT and tc.attemptNumber() == 0:
                own = f"{out}/_temporary/*/_temporary/attempt_*_m_{tc.partitionId():06d}_*/**/*.parquet"
                deadline, size = time.time() + 15, 0
                while size == 0 and time.time() < deadline:
                    size = sum(os.path.getsize(f) for f in glob.glob(own, recursive=True))
                    time.sleep(0.05)
                (markers / f"{tc.partitionId()}-{size}").touch()
                raise RuntimeError(f"injected failure: partition {tc.partitionId()}, attempt 0, row {n}")
            yield row

    flaky = spark.createDataFrame(table.rdd.mapPartitions(fail_mid_file), table.schema)
    with harness.sql_conf(spark, conf):
        check_write(spark, flaky, out, expected, schema=table.schema, partition_by=partition_by,
                    **{"parquet.block.size": 8192})
    failed = dict(m.name.split("-") for m in markers.iterdir())
    assert sorted(failed) == [str(i) for i in range(PARTS)], "not every task failed once"
    assert all(int(size) > 0 for size in failed.values()), f"bytes written by the failed attempts: {failed}"


def test_first_attempts_fail_mid_file_sort_based_partitioned_writer(spark, table, expected, tmp_path):
    """The rows come sorted by the partition column, so the writer adds no sort and writes them as they come; at the
    2,001st row of each partition the first evaluation fails (raise_error, once per partition: a JVM system
    property, the driver being the executor), mid-file in the sort-based partitioned writer."""
    key = f"dsha.rel.{uuid.uuid4().hex}."
    fail_once = (f"CASE WHEN (monotonically_increasing_id() & 8589934591) = {FAIL_AT} AND "
                 f"reflect('java.lang.System', 'setProperty', concat('{key}', spark_partition_id()), 'failed') = 'null'"
                 " THEN CAST(raise_error('injected failure') AS BIGINT) ELSE id END AS id")
    flaky = table.sortWithinPartitions("p").selectExpr(fail_once, *table.columns[1:])
    ordering = flaky._jdf.queryExecution().executedPlan().outputOrdering().toString()
    assert re.match(r"\w+\(p#", ordering), f"the writer would sort the rows first: {ordering}"  # List/Stream
    check_write(spark, flaky, tmp_path / "t", expected, schema=table.schema, partition_by="p")
    system = spark.sparkContext._jvm.java.lang.System
    assert [system.getProperty(f"{key}{i}") for i in range(PARTS)] == ["failed"] * PARTS


# ------------------------------------------------------------------------------------------ 4. AQE

@pytest.mark.parametrize("aqe", ["true", "false"])
@pytest.mark.parametrize("shuffle", ["repartition by column", "rebalance, partition_by"])
def test_aqe_skewed_shuffle_before_the_write(spark, tmp_path, aqe, shuffle):
    """A shuffle on a skewed key (70% of the rows on one value) just before the write: AQE coalesces small
    partitions and splits the skewed one of a rebalance; every task's files count once."""
    skewed = mixed(spark, ROWS, PARTS).selectExpr(
        "*", "CAST(CASE WHEN id % 10 < 7 THEN 0 ELSE id % 40 END AS INT) AS k")
    expected = digest_of(spark, skewed)
    settings = {"spark.sql.adaptive.enabled": aqe, "spark.sql.shuffle.partitions": 20,
                "spark.sql.adaptive.coalescePartitions.enabled": "true",
                "spark.sql.adaptive.advisoryPartitionSizeInBytes": "16k",
                "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes": "1k",
                "spark.sql.adaptive.skewJoin.skewedPartitionFactor": 1}
    with harness.sql_conf(spark, settings):
        if shuffle == "repartition by column":
            check_write(spark, skewed.repartition("k"), tmp_path / "t", expected)
        else:
            skewed.createOrReplaceTempView("skewed")  # the hint in SQL: Spark 3.5's DataFrame.hint wants no name
            rebalanced = spark.sql("SELECT /*+ REBALANCE(k) */ * FROM skewed")
            _, m = check_write(spark, rebalanced, tmp_path / "t", expected, partition_by="k")
            keys = {f"k={r.k}" for r in skewed.select("k").distinct().collect()}
            assert {e["path"].split("/")[0] for e in m["files"]} == keys


# ------------------------------------------------------------------------------------------ 5. many partitions

@pytest.mark.parametrize("conf", [
    pytest.param({}, id="sort-based"),
    pytest.param({"spark.sql.maxConcurrentOutputFileWriters": 1000}, id="concurrent writers"),
    pytest.param({"spark.sql.maxConcurrentOutputFileWriters": 16, "spark.sql.files.maxRecordsPerFile": 7},
                 id="16 concurrent writers then sorted, files of 7 rows"),
])
def test_200_partition_directories_from_every_task(spark, tmp_path, conf):
    """Each of 2 tasks writes a file into each of 200 directories p=../q=.. (q: names Spark escapes, and NULL);
    with concurrent writers a task's rows go to its files interleaved, beyond 16 writers the rest is sorted, and
    maxRecordsPerFile rolls files within a directory."""
    df = spark.range(0, 4000, 1, 2).selectExpr(*harness.MIXED_COLUMNS).selectExpr(
        "*", "CAST(id % 200 AS INT) AS p",
        "element_at(array('a/b', 'x y', '%', 'ü=1:#', NULL), CAST(id % 5 AS INT) + 1) AS q")
    expected = digest_of(spark, df)
    with harness.sql_conf(spark, conf):
        _, m = check_write(spark, df, tmp_path / "t", expected, partition_by=["p", "q"])
    paths = [e["path"] for e in m["files"]]
    assert len({p.rsplit("/", 1)[0] for p in paths}) == 200
    assert {p.rsplit("/", 1)[1][:10] for p in paths} == {"part-00000", "part-00001"}
    rolled = "spark.sql.files.maxRecordsPerFile" in conf
    assert len(paths) == (800 if rolled else 400)  # 10 rows per task and directory: 7 + 3 when rolled
    assert any(p.startswith("p=0/q=a%2Fb/") for p in paths)
    assert any(p.startswith("p=4/q=__HIVE_DEFAULT_PARTITION__/") for p in paths)


# ------------------------------------------------------------------------------ 6. empty, overwrite, failure

@pytest.mark.parametrize("partition_by", [None, "i"])
def test_empty_input(spark, tmp_path, partition_by):
    empty = mixed(spark, 0, 3)
    _, m = check_write(spark, empty, tmp_path / "t", digest_of(spark, empty), partition_by=partition_by)
    assert m["rows"] == 0 and all(e["rows"] == 0 for e in m["files"])


def test_overwrite_replaces_data_and_manifest(spark, table, expected, tmp_path):
    out = tmp_path / "t"
    first = mixed(spark, 3000, 3).selectExpr("*", "CAST(id % 7 AS INT) AS p")
    before, _ = check_write(spark, first, out, digest_of(spark, first), partition_by="p")
    check_write(spark, table, out, expected, mode="overwrite")
    assert before.digest != expected


def _broken(spark, df):
    def always(rows):
        yield from rows
        if TaskContext.get().partitionId() == 1:
            raise RuntimeError("injected permanent failure")

    return spark.createDataFrame(df.rdd.mapPartitions(always), df.schema)


@pytest.mark.parametrize("mode", ["errorifexists", "overwrite", "append"])
def test_a_failed_write_leaves_no_manifest_claiming_a_digest(spark, table, tmp_path, mode):
    """A job that fails (one task fails every attempt) raises. A new path gets no manifest; an overwrite has already
    removed the old table and its manifest (as df.write does), so no manifest claims the old digest; an append
    leaves the old manifest, still exact for the old files. Whatever is left re-digests exactly."""
    out = tmp_path / "t"
    old = None
    if mode != "errorifexists":
        old, _ = check_write(spark, mixed(spark, 3000, 3), out, digest_of(spark, mixed(spark, 3000, 3)))
    with pytest.raises(Exception, match="injected permanent failure"):
        dsha.write(_broken(spark, table.drop("p")), str(out), mode=mode)
    m = assert_redigest_exact(spark, out, table.drop("p").schema, tmp_path)
    if mode == "append":
        assert m["digest"] == old.digest
        assert dsha.fingerprint_path(spark, str(out), schema=table.drop("p").schema).digest == old.digest
    else:
        assert m is None


# ------------------------------------------------------------------------------------------ 7. a killed writer

KILL_CASES = [
    pytest.param("append", "committed", id="append, killed after the job committed"),
    pytest.param("append", "tasks", id="append, killed while tasks write", marks=pytest.mark.slow),
    pytest.param("append", "commit", id="append, killed while the job commits", marks=pytest.mark.slow),
    pytest.param("overwrite", "tasks", id="overwrite, killed while tasks write", marks=pytest.mark.slow),
    pytest.param("overwrite", "commit", id="overwrite, killed while the job commits", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("mode,when", KILL_CASES)
def test_writer_killed_mid_job(spark, tmp_path, mode, when):
    """A spark-submit driver (local[2]) appends to or overwrites a dsha-written table (partitioned: 97 directories)
    and is SIGKILLed, with its whole process group: while its tasks are part way through their files, as soon as
    the job's first file appears in the table (the job commit moving files), or as soon as the job commit wrote
    _SUCCESS (before the manifest is rewritten). Whatever the kill left, a re-digest from the manifest equals a full
    read and trusts the manifest only for the files it truly describes; an overwrite's old manifest is gone."""
    out, markers, child = tmp_path / "t", tmp_path / "markers", tmp_path / "child"
    markers.mkdir()
    schema = mixed(spark, 0, 1).schema
    old, _ = check_write(spark, mixed(spark, 2000, 2), out, digest_of(spark, mixed(spark, 2000, 2)), partition_by="i")
    initial, success = data_files(out), out / "_SUCCESS"
    success_mtime = success.stat().st_mtime_ns
    reached = {
        "tasks": lambda: len(list(markers.iterdir())) >= 2,
        "commit": lambda: bool(data_files(out) - initial),
        "committed": lambda: success.exists() and success.stat().st_mtime_ns != success_mtime,
    }[when]
    child.mkdir()
    with open(child / "driver.out", "w") as stdout, open(child / "driver.err", "w") as stderr:
        driver = harness.spark_submit_async(
            child, "local[2]", JOB, ["--rows", 4000, "--partitions", 2, "--sleep-per-task", 1 if when == "tasks" else 0,
                                     "--sleep-at-row", 100, "--marker-dir", markers, "--write", out, "--mode", mode,
                                     "--partition-by", "i"],
            stdout=stdout, stderr=stderr)
        try:
            deadline = time.time() + 300
            while not _safe(reached):
                assert driver.poll() is None, ("the writer ended before it was killed:\n"
                                               + (child / "driver.err").read_text()[-4000:])
                assert time.time() < deadline, "the kill point was never reached"
                time.sleep(0.01)
            os.killpg(driver.pid, signal.SIGKILL)
            driver.wait(timeout=30)
        finally:
            harness.kill_group(driver, grace=1)
    left = data_files(out) if out.exists() else set()
    m = assert_redigest_exact(spark, out, schema, tmp_path)
    state = f"{len(left - initial)} new files, {len(left & initial)} old, manifest: {m and len(m['files'])} entries"
    if mode == "append":
        assert left >= initial, state
        assert m is not None and {e["path"] for e in m["files"]} >= initial, state
    else:
        assert not (left & initial), state
        assert m is None or m["digest"] != old.digest, state
        if when == "tasks":
            assert m is None and not left, state


def _safe(predicate) -> bool:
    """A polled condition on files that a running writer may move or delete between two system calls."""
    try:
        return predicate()
    except FileNotFoundError:
        return False


# ------------------------------------------------------------------------------------------ 2, 3. a real cluster

CLUSTER_ROWS, CLUSTER_PARTS = 20_000, 8


@pytest.fixture(scope="module")
def cluster_expected(spark):
    return digest_of(spark, mixed(spark, CLUSTER_ROWS, CLUSTER_PARTS))


def check_cluster_write(spark, values, out: Path, expected: str):
    """The digest a cluster job's dsha.write printed, the files read back and the manifest agree with ``expected``."""
    assert values["DSHA_DIGEST"] == expected
    assert values["DSHA_ROWS"] == str(CLUSTER_ROWS)
    schema = mixed(spark, 0, 1).schema
    assert digest_of(spark, read_back(spark, out, schema)) == expected
    m = manifest_of(out)
    assert m["digest"] == expected and {e["path"] for e in m["files"]} == data_files(out)
    assert dsha.fingerprint_path(spark, str(out), schema=schema).files_read == 0


def test_speculative_copy_wins(spark, standalone_cluster, cluster_expected, tmp_path):
    """Partition 0's first attempt writes its whole file, then sleeps 100 s before finishing; aggressive speculation
    launches a copy on the other worker (registered as `localhost`, the first as 127.0.0.1), which commits; the
    original is killed. The event log proves a speculative attempt succeeded and the original did not."""
    cluster = standalone_cluster(workers=2, hosts=["127.0.0.1", "localhost"])
    events, out = tmp_path / "events", tmp_path / "t"
    conf = {**harness.event_log_conf(events), "spark.speculation": "true", "spark.speculation.interval": "200ms",
            "spark.speculation.quantile": "0.5", "spark.speculation.multiplier": "1.5",
            "spark.speculation.minTaskRuntime": "200ms"}
    started = time.time()
    values = job_result(cluster.submit(JOB, ["--rows", CLUSTER_ROWS, "--partitions", CLUSTER_PARTS,
                                             "--slow-first-attempt", "0:100", "--sleep-at-row", -1, "--write", out],
                                       conf=conf))
    assert time.time() - started < 95, "the job waited for the slow original attempt"
    check_cluster_write(spark, values, out, cluster_expected)
    ends = harness.task_ends(events)
    won = {(stage, index) for stage, index, _, speculative, reason in ends if speculative and reason == "Success"}
    assert [index for _, index in won] == [0], f"no speculative copy of partition 0 won: {ends}"
    assert not [e for e in ends if (e[0], e[1]) in won and not e[3] and e[4] == "Success"], ends


@pytest.mark.slow
def test_worker_killed_mid_write(spark, standalone_cluster, cluster_expected, tmp_path):
    """Three workers; once tasks are part way through their files (each pauses after 500 rows), one worker is
    SIGKILLed with its executor. Its tasks' attempts die mid-file; the scheduler re-runs them elsewhere; files of
    tasks it had committed stay committed."""
    cluster = standalone_cluster(workers=3)
    markers, out = tmp_path / "markers", tmp_path / "t"
    markers.mkdir()
    partitions = 12
    # once 5 attempts started: tasks part way through their files on every executor, some committed
    done = cluster.submit_killing_a_worker(JOB, ["--rows", CLUSTER_ROWS, "--partitions", partitions, "--sleep-per-task",
                                                 2, "--sleep-at-row", 500, "--marker-dir", markers, "--write", out],
                                           markers, conf={"spark.task.maxFailures": "8",
                                                          "spark.stage.maxConsecutiveAttempts": "8"})
    values = job_result(done)
    check_cluster_write(spark, values, out, cluster_expected)
    attempts = list(markers.iterdir())
    assert len(attempts) > partitions, f"no task was re-run after the kill: {sorted(p.name for p in attempts)}"
