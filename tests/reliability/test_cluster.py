"""A real cluster: Spark standalone (a master and workers as separate JVMs on 127.0.0.1), jobs submitted with
spark-submit --jars; the digest equals the one computed by local[1], also with speculative execution, with tasks
failing on their first attempt, and when a worker (with its executor) is killed in the middle of a job."""
import time

import pytest

import harness
from harness import JOB, job_result

ROWS, PARTITIONS = 50_000, 8


@pytest.fixture(scope="module")
def local1(tmp_path_factory):
    """The reference: the same job in local[1] (one thread, one partition at a time, no shuffle parallelism), with
    the flat columns' digest from the same job (--also-flat)."""
    done = harness.spark_submit(tmp_path_factory.mktemp("local1"), "local[1]", JOB,
                                ["--rows", ROWS, "--partitions", PARTITIONS, "--also-flat"])
    values = job_result(done)
    assert values["DSHA_ROWS"] == values["DSHA_FLAT_ROWS"] == str(ROWS)
    return values


@pytest.fixture(scope="module")
def local1_digest(local1):
    return local1["DSHA_DIGEST"]


@pytest.fixture(scope="module")
def two_workers(tmp_path_factory):
    """One standalone cluster of two workers, started once for the tests that inject no fault into it."""
    cluster = harness.StandaloneCluster(tmp_path_factory.mktemp("two_workers"))
    try:  # stopped (every process group killed) even if it never came up
        yield cluster.start(2)
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def on_two_workers(two_workers):
    """One job on the fault-free cluster, shuffled into 5 partitions: the whole table's digest, and the flat columns'
    after the same shuffle (one executor start for both tests below)."""
    values = job_result(two_workers.submit(JOB, ["--rows", ROWS, "--partitions", PARTITIONS, "--repartition", 5,
                                                 "--also-flat"]))
    apps = two_workers.state().get("completedapps", []) + two_workers.state().get("activeapps", [])
    assert apps, "the job did not run on the standalone master"
    return values


def test_standalone_cluster_equals_local1(on_two_workers, local1):
    assert on_two_workers["DSHA_ROWS"] == str(ROWS)
    assert on_two_workers["DSHA_DIGEST"] == local1["DSHA_DIGEST"]


def test_standalone_cluster_row_bytes_step_equals_local1(on_two_workers, local1):
    """After a shuffle the partial step is dsha's PartialDsha, whose row writer is generated on each executor JVM:
    the digest equals local[1]'s, where Spark's generated aggregate hashes the same (unshuffled) rows."""
    assert local1["DSHA_FLAT_ROW_BYTES_STEP"] == "False"
    assert on_two_workers["DSHA_FLAT_ROW_BYTES_STEP"] == "True"
    assert on_two_workers["DSHA_FLAT_ROWS"] == str(ROWS)
    assert on_two_workers["DSHA_FLAT_DIGEST"] == local1["DSHA_FLAT_DIGEST"]
    assert on_two_workers["DSHA_FLAT_DIGEST"] != on_two_workers["DSHA_DIGEST"]  # the flat job hashed fewer columns


@pytest.mark.slow
def test_cluster_tasks_fail_on_first_attempt(standalone_cluster, local1_digest):
    """Every task's first attempt fails after it emitted all its rows (so its partial aggregate saw everything)."""
    cluster = standalone_cluster(workers=2)
    values = job_result(cluster.submit(JOB, ["--rows", ROWS, "--partitions", PARTITIONS, "--fail-first-attempt"],
                                       conf={"spark.task.maxFailures": "4"}))
    assert values["DSHA_DIGEST"] == local1_digest


@pytest.mark.slow
def test_speculative_execution(standalone_cluster, local1_digest, tmp_path):
    """Partition 0's first attempt sleeps; aggressive speculation launches a copy, which wins. Spark never runs a
    speculative copy on a host that already runs an attempt, so the two workers register under two names for the
    loopback address (127.0.0.1 and localhost); the event log proves a speculative attempt was launched."""
    cluster = standalone_cluster(workers=2, hosts=["127.0.0.1", "localhost"])
    events = tmp_path / "events"
    conf = {**harness.event_log_conf(events), "spark.speculation": "true", "spark.speculation.interval": "200ms",
            "spark.speculation.quantile": "0.5", "spark.speculation.multiplier": "1.5",
            "spark.speculation.minTaskRuntime": "200ms"}
    started = time.time()
    values = job_result(cluster.submit(JOB, ["--rows", ROWS, "--partitions", PARTITIONS,
                                             "--slow-first-attempt", "0:60"], conf=conf))
    assert values["DSHA_DIGEST"] == local1_digest
    speculative = harness.speculative_task_starts(events)
    assert speculative, "no speculative task was launched: the test did not test speculation"
    assert time.time() - started < 60 + 45 or speculative


@pytest.mark.slow
def test_worker_killed_mid_job(standalone_cluster, local1_digest, tmp_path):
    """Three workers; once tasks have run on the executors, one worker is SIGKILLed with its executor. Its running
    tasks and its finished map outputs are lost; the scheduler re-runs them on the other executors."""
    cluster = standalone_cluster(workers=3)
    markers = tmp_path / "markers"
    markers.mkdir()
    partitions = 12
    # once 5 attempts started: tasks started on every executor, some finished
    done = cluster.submit_killing_a_worker(JOB, ["--rows", ROWS, "--partitions", partitions, "--repartition", 6,
                                                 "--sleep-per-task", 1.5, "--marker-dir", markers], markers,
                                           conf={"spark.task.maxFailures": "8",
                                                 "spark.stage.maxConsecutiveAttempts": "8"})
    values = job_result(done)
    err = done.stderr
    assert values["DSHA_DIGEST"] == local1_digest
    attempts = list(markers.iterdir())
    assert len(attempts) > partitions, f"no task was re-run after the kill: {sorted(p.name for p in attempts)}"
    assert "Lost executor" in err or "lost" in err.lower(), err[-3000:]
